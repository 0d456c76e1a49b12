import type { PageContext } from '../context.ts';
import type { OperatorSystemView } from '../presenters/operator.ts';
import { Time } from './components.tsx';
import { OperatorFrame } from './operator-shared.tsx';

export function OperatorSystemPage(props: { context: PageContext; view: OperatorSystemView }): JSX.Element {
  const { view } = props;
  return (
    <OperatorFrame context={props.context} section="system" title="System">
      <div class="grid">
        <section class="card" aria-labelledby="gateway-heading">
          <h2 id="gateway-heading">Gateway</h2>
          <dl class="facts">
            <dt>Version</dt>
            <dd safe>{view.version}</dd>
            <dt>Up for</dt>
            <dd safe>{view.uptime}</dd>
            <dt>Started</dt>
            <dd>
              <Time at={view.startedAt} />
            </dd>
            <dt>Database</dt>
            <dd safe>{view.databaseKind}</dd>
            <dt>Database URL</dt>
            <dd class="mono" safe>
              {view.database}
            </dd>
          </dl>
        </section>
        <section class="card" aria-labelledby="counts-heading">
          <h2 id="counts-heading">Counts</h2>
          <dl class="facts">
            {view.counts.map((count) => (
              <>
                <dt safe>{count.label}</dt>
                <dd safe>{count.value}</dd>
              </>
            ))}
          </dl>
        </section>
      </div>
    </OperatorFrame>
  );
}
