import type { PageContext } from '../context.ts';
import type { OverviewView, UsageView } from '../presenters/overview.ts';
import { formatCount } from '../presenters/shared.ts';
import { PageHeader, Time } from './components.tsx';
import { Layout } from './layout.tsx';
import { MessagesTable, NumbersTable } from './shared-tables.tsx';

export function OverviewPage(props: { context: PageContext; view: OverviewView }): JSX.Element {
  const { context, view } = props;
  return (
    <Layout context={context}>
      <PageHeader title={view.accountName} />
      <div class="grid">
        <UsageCard usage={view.usage} />
      </div>
      <h2>Numbers</h2>
      <div data-status-source="/numbers/status.json">
        <NumbersTable numbers={view.numbers} empty={{ text: 'No numbers yet. The operator links WhatsApp numbers to your account.' }} />
      </div>
      <h2>Latest messages</h2>
      <MessagesTable
        messages={view.latestMessages}
        empty={{ text: 'No messages yet', action: { href: '/numbers', label: 'simulate an incoming one on the Numbers page' } }}
      />
      {view.latestMessages.length === 0 ? (
        ''
      ) : (
        <p>
          <a href="/messages">All messages →</a>
        </p>
      )}
    </Layout>
  );
}

function UsageCard(props: { usage: UsageView }): JSX.Element {
  const { usage } = props;
  const limitText = usage.limit === null ? 'unlimited' : formatCount(usage.limit);
  const fill = usage.percent === null ? '' : usage.percent >= 100 ? 'full' : usage.percent >= 80 ? 'high' : '';
  return (
    <section class="card" aria-labelledby="usage-heading">
      <h2 id="usage-heading">This month</h2>
      <p class="big-number" safe>
        {formatCount(usage.used)}
      </p>
      <p class="muted" safe>{`messages sent of ${limitText} on the ${usage.plan} plan${usage.isCustomLimit ? ' (custom limit)' : ''}`}</p>
      {usage.percent === null ? (
        ''
      ) : (
        <meter
          class={fill}
          min="0"
          max="100"
          value={String(usage.percent)}
          aria-label="Share of the monthly volume used"
          safe
        >{`${usage.percent}%`}</meter>
      )}
      <p class="small">
        Resets <Time at={usage.resetsAt} />
      </p>
    </section>
  );
}
