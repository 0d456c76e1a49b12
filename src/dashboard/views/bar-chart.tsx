/**
 * A bar chart drawn on the server as inline SVG (ADR 0073): no script and no inline style, so the
 * strict Content-Security-Policy holds. Bars of several series stack; a cap may be drawn as a
 * dashed line. The figures behind it are in a table under it, for screen readers and for anyone
 * who wants the numbers; each bar's group also names them in a tooltip.
 */

interface ChartSeries {
  name: string;
  /** A class of app.css that colours the series (`series-sent`, `series-failed`…). */
  className: string;
  values: readonly number[];
  /** Shown in the table and the tooltip only, not drawn (a figure on another scale, such as a count beside a time). */
  tableOnly?: boolean;
}

export interface BarChartProps {
  id: string;
  /** One sentence that says what the chart shows, read first by a screen reader. */
  summary: string;
  /** The bars' places, oldest first: what the axis and the table call each. */
  categories: readonly { label: string; key: string }[];
  series: readonly ChartSeries[];
  /** The axis names every how many categories. */
  labelEvery: number;
  /** The table's first column. */
  categoryHeading: string;
  cap?: { value: number; label: string } | null;
  /** Each category's own data attributes (besides one per series), for tests and scripts. */
  keyAttribute: string;
}

const WIDTH = 760;
const HEIGHT = 260;
const LEFT = 52;
const RIGHT = 8;
const TOP = 14;
const BOTTOM = 40;

export function BarChart(props: BarChartProps): JSX.Element {
  const { categories, series } = props;
  const drawn = series.filter((one) => one.tableOnly !== true);
  const totals = categories.map((_category, index) => drawn.reduce((sum, one) => sum + (one.values[index] ?? 0), 0));
  const top = niceCeiling(Math.max(1, props.cap?.value ?? 0, ...totals));
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = (WIDTH - LEFT - RIGHT) / Math.max(1, categories.length);
  const barWidth = Math.max(2, slot * 0.72);
  const y = (value: number) => TOP + plotHeight - (value / top) * plotHeight;
  const ticks = [0, top / 2, top];
  return (
    <figure class="bar-chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${props.id}-title`} class="chart">
        <title id={`${props.id}-title`} safe>
          {props.summary}
        </title>
        {ticks.map((tick) => (
          <g>
            <line x1={String(LEFT)} x2={String(WIDTH - RIGHT)} y1={fixed(y(tick))} y2={fixed(y(tick))} class="chart-grid" />
            <text x={String(LEFT - 6)} y={fixed(y(tick) + 4)} class="chart-text" text-anchor="end" safe>
              {formatTick(tick)}
            </text>
          </g>
        ))}
        {categories.map((category, index) => {
          const x = LEFT + index * slot + (slot - barWidth) / 2;
          let base = 0;
          const figures = series.map((one) => `${one.values[index] ?? 0} ${one.name.toLowerCase()}`).join(', ');
          const attributes: Record<string, string> = { [`data-${props.keyAttribute}`]: category.key };
          for (const one of series) attributes[`data-${one.name.toLowerCase().replace(/[^a-z]+/g, '-')}`] = String(one.values[index] ?? 0);
          return (
            <g class="chart-column" {...attributes}>
              <title safe>{`${category.label}: ${figures}`}</title>
              {drawn.map((one) => {
                const value = one.values[index] ?? 0;
                if (value === 0) return '';
                const bottom = y(base);
                base += value;
                const height = Math.max(1, bottom - y(base));
                return (
                  <rect
                    x={fixed(x)}
                    y={fixed(bottom - height)}
                    width={fixed(barWidth)}
                    height={fixed(height)}
                    class={`chart-bar ${one.className}`}
                  />
                );
              })}
              {index % props.labelEvery === 0 ? (
                <text x={fixed(x + barWidth / 2)} y={String(HEIGHT - BOTTOM + 20)} class="chart-text" text-anchor="middle" safe>
                  {category.label}
                </text>
              ) : (
                ''
              )}
            </g>
          );
        })}
        <line x1={String(LEFT)} x2={String(WIDTH - RIGHT)} y1={fixed(y(0))} y2={fixed(y(0))} class="chart-axis" />
        {props.cap == null ? (
          ''
        ) : (
          <g>
            <line
              x1={String(LEFT)}
              x2={String(WIDTH - RIGHT)}
              y1={fixed(y(props.cap.value))}
              y2={fixed(y(props.cap.value))}
              class="chart-cap"
              data-cap={String(props.cap.value)}
            />
            <text x={String(WIDTH - RIGHT)} y={fixed(y(props.cap.value) - 5)} class="chart-text chart-cap-label" text-anchor="end" safe>
              {props.cap.label}
            </text>
          </g>
        )}
      </svg>
      <figcaption>
        <span class="muted small" safe>
          {props.summary}
        </span>
        {drawn.length > 1 || props.cap != null ? (
          <ul class="chart-legend small">
            {drawn.map((one) => (
              <li>
                <span class={`swatch ${one.className}`}></span>
                <span safe>{one.name}</span>
              </li>
            ))}
            {props.cap == null ? (
              ''
            ) : (
              <li>
                <span class="swatch swatch-cap"></span>
                <span safe>{props.cap.label}</span>
              </li>
            )}
          </ul>
        ) : (
          ''
        )}
      </figcaption>
      <details class="chart-data">
        <summary>The numbers behind the chart</summary>
        <div class="table-wrap">
          <table class="keep-table">
            <thead>
              <tr>
                <th scope="col" safe>
                  {props.categoryHeading}
                </th>
                {series.map((one) => (
                  <th scope="col" safe>
                    {one.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {categories.map((category, index) => (
                <tr>
                  <th scope="row" safe>
                    {category.label}
                  </th>
                  {series.map((one) => (
                    <td safe>{String(one.values[index] ?? 0)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/** The scale's top: the highest figure rounded up to 1, 2 or 5 times a power of ten. */
function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

function formatTick(value: number): string {
  if (value >= 10_000) return `${Math.round(value / 1000)}k`;
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function fixed(value: number): string {
  return value.toFixed(1);
}
