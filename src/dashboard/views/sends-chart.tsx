import type { SendsChartView } from '../presenters/number-sending.ts';

const BAR_WIDTH = 20;
const BAR_GAP = 4;
const PLOT_HEIGHT = 100;
const AXIS_HEIGHT = 18;
/** Room on the left for the scale's top value. */
const SCALE_WIDTH = 36;

/**
 * Sends per hour over the last day against the hourly cap, drawn on the server as inline SVG:
 * no script and no inline style, so the page's strict Content-Security-Policy holds. Each bar
 * carries its figure in a <title> (a tooltip, and what a screen reader reads).
 */
export function SendsChart(props: { chart: SendsChartView; id: string }): JSX.Element {
  const { chart, id } = props;
  const highest = Math.max(1, chart.hourlyCap ?? 0, ...chart.bars.map((bar) => bar.count));
  const width = SCALE_WIDTH + chart.bars.length * (BAR_WIDTH + BAR_GAP);
  const heightOf = (count: number) => (count === 0 ? 0 : Math.max(1, Math.round((count / highest) * PLOT_HEIGHT)));
  const capY = chart.hourlyCap === null ? null : PLOT_HEIGHT - heightOf(chart.hourlyCap);
  const summary = `${chart.total} sent in the last 24 hours${chart.hourlyCap === null ? ', no hourly cap' : `, against a cap of ${chart.hourlyCap} an hour`}`;
  return (
    <figure class="sends-chart">
      <svg viewBox={`0 0 ${width} ${PLOT_HEIGHT + AXIS_HEIGHT}`} role="img" aria-labelledby={id} class="chart">
        <title id={id} safe>
          {summary}
        </title>
        <text x="0" y="10" class="chart-scale" safe>
          {String(highest)}
        </text>
        <line x1={String(SCALE_WIDTH)} y1={String(PLOT_HEIGHT)} x2={String(width)} y2={String(PLOT_HEIGHT)} class="chart-axis" />
        {chart.bars.map((bar, index) => {
          const x = SCALE_WIDTH + index * (BAR_WIDTH + BAR_GAP);
          const height = heightOf(bar.count);
          const overCap = chart.hourlyCap !== null && bar.count > chart.hourlyCap;
          return (
            <g>
              <rect
                x={String(x)}
                y={String(PLOT_HEIGHT - height)}
                width={String(BAR_WIDTH)}
                height={String(height)}
                class={overCap ? 'chart-bar over' : 'chart-bar'}
                data-hour={bar.start.toISOString()}
                data-count={String(bar.count)}
              >
                <title safe>{`${bar.label} UTC: ${bar.count} sent`}</title>
              </rect>
              {index % 6 === 0 ? (
                <text x={String(x)} y={String(PLOT_HEIGHT + AXIS_HEIGHT - 4)} class="chart-label" safe>
                  {bar.label}
                </text>
              ) : (
                ''
              )}
            </g>
          );
        })}
        {capY === null ? (
          ''
        ) : (
          <line
            x1={String(SCALE_WIDTH)}
            y1={String(capY)}
            x2={String(width)}
            y2={String(capY)}
            class="chart-cap"
            data-cap={String(chart.hourlyCap)}
          />
        )}
      </svg>
      <figcaption class="muted small" safe>{`${summary}; hours in UTC.`}</figcaption>
    </figure>
  );
}
