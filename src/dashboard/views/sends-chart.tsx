import type { SendsChartView } from '../presenters/number-sending.ts';
import { BarChart } from './bar-chart.tsx';

/**
 * A number's sends per hour over the last day against its policy's cap per hour (a dashed line),
 * drawn on the server (bar-chart.tsx), with the figures in a table under it. A bar over the cap
 * (sends made before the cap was set) shows in the danger colour.
 */
export function SendsChart(props: { chart: SendsChartView; id: string }): JSX.Element {
  const { chart, id } = props;
  const cap = chart.hourlyCap;
  const summary = `${chart.total} sent in the last 24 hours${cap === null ? ', no cap per hour' : `, against a cap of ${cap} an hour`}; hours in UTC.`;
  return (
    <BarChart
      id={id}
      summary={summary}
      categories={chart.bars.map((bar) => ({ label: bar.label, key: bar.start.toISOString() }))}
      categoryHeading="Hour (UTC)"
      keyAttribute="hour"
      labelEvery={4}
      series={[
        { name: 'Sent', className: 'series-sent', values: chart.bars.map((bar) => (cap !== null && bar.count > cap ? 0 : bar.count)) },
        {
          name: 'Over the cap',
          className: 'series-failed',
          values: chart.bars.map((bar) => (cap !== null && bar.count > cap ? bar.count : 0)),
        },
      ]}
      cap={cap === null ? null : { value: cap, label: `cap ${cap}/h` }}
    />
  );
}
