import type { PageContext } from '../context.ts';
import { ACTIVITY_DAYS, dayLabel, type ActivityView } from '../presenters/activity.ts';
import { BarChart } from './bar-chart.tsx';
import { PageHeader } from './components.tsx';
import { Layout } from './layout.tsx';

/** `/activity`: the account's last 30 days in charts, with the figures behind each (ADR 0073). */
export function ActivityPage(props: { context: PageContext; view: ActivityView }): JSX.Element {
  const { context, view } = props;
  const days = view.messages.map((day) => ({ label: dayLabel(day.day), key: day.day.toISOString().slice(0, 10) }));
  const { totals } = view;
  // What the three charts share: a bar per day, every fifth named on the axis.
  const daily = { categories: days, categoryHeading: 'Day (UTC)', keyAttribute: 'day', labelEvery: 5 };
  return (
    <Layout context={context}>
      <PageHeader title="Activity" />
      <p class="muted">{`The last ${ACTIVITY_DAYS} days, by UTC day; today is the last bar.`}</p>
      <section class="card" aria-labelledby="messages-chart-heading">
        <h2 id="messages-chart-heading">Messages</h2>
        <BarChart
          id="messages-chart"
          summary={`${totals.sent} sent, ${totals.received} received and ${totals.failed} failed in the last ${ACTIVITY_DAYS} days.`}
          {...daily}
          series={[
            { name: 'Sent', className: 'series-sent', values: view.messages.map((day) => day.sent) },
            { name: 'Received', className: 'series-received', values: view.messages.map((day) => day.received) },
            { name: 'Failed', className: 'series-failed', values: view.messages.map((day) => day.failed) },
          ]}
        />
        <p class="muted small">
          Sent counts the messages that left their number (now sent, delivered or read); queued, cancelled and expired ones are not in the
          chart. Each message counts on the day it was created, as GET /messages with since and until lists it.
        </p>
      </section>
      <section class="card" aria-labelledby="deliveries-chart-heading">
        <h2 id="deliveries-chart-heading">Webhook deliveries</h2>
        <BarChart
          id="deliveries-chart"
          summary={`${totals.delivered} delivered, ${totals.deliveryFailed} failed and ${totals.pending} still pending in the last ${ACTIVITY_DAYS} days.`}
          {...daily}
          series={[
            { name: 'Delivered', className: 'series-delivered', values: view.deliveries.map((day) => day.delivered) },
            { name: 'Failed', className: 'series-failed', values: view.deliveries.map((day) => day.failed) },
            { name: 'Pending', className: 'series-pending', values: view.deliveries.map((day) => day.pending) },
          ]}
        />
        <h3>Time per attempt</h3>
        <BarChart
          id="latency-chart"
          summary={`The mean time of a webhook attempt each day, in milliseconds; the longest is in the table.`}
          {...daily}
          series={[
            { name: 'Mean ms', className: 'series-latency', values: view.deliveries.map((day) => day.meanMs ?? 0) },
            { name: 'Longest ms', className: 'series-latency', values: view.deliveries.map((day) => day.maxMs ?? 0), tableOnly: true },
            { name: 'Attempts', className: 'series-latency', values: view.deliveries.map((day) => day.attempts), tableOnly: true },
          ]}
        />
      </section>
    </Layout>
  );
}
