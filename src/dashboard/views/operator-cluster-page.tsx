import type { PageContext } from '../context.ts';
import type { ClusterStatus, ReportedTask } from '../../observability/cluster-status.ts';
import { StatusBadge, Time } from './components.tsx';
import { OperatorFrame } from './operator-shared.tsx';

/** How many of a node's phones the table lists before it says "and n more". */
const PHONES_SHOWN = 12;

export interface ClusterView extends ClusterStatus {
  /** Each node's periodic tasks; null for a node that is not live or did not answer. */
  tasks: ReadonlyMap<string, ReportedTask[] | null>;
  thisNodeId: string;
  leaseTtlMs: number;
}

export function OperatorClusterPage(props: { context: PageContext; view: ClusterView }): JSX.Element {
  const { view } = props;
  return (
    <OperatorFrame context={props.context} section="cluster" title="Cluster">
      <p class="muted" safe>
        {`Each number is served by one node under a lease of ${view.leaseTtlMs / 1000} s. A node that stops heartbeating loses its numbers to the others once their leases run out; a node that stops cleanly hands them over at once.`}
      </p>
      <section class="card" aria-labelledby="nodes-heading">
        <h2 id="nodes-heading">Nodes</h2>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Node</th>
                <th scope="col">State</th>
                <th scope="col">Heartbeat</th>
                <th scope="col">Started</th>
                <th scope="col">Address</th>
                <th scope="col">Numbers</th>
              </tr>
            </thead>
            <tbody>
              {view.nodes.map((node) => (
                <tr>
                  <td>
                    <strong safe>{node.name}</strong>
                    {node.id === view.thisNodeId ? ' (this node)' : ''}
                    <br />
                    <span class="mono muted" safe>{`${node.id} · pid ${node.pid} on ${node.hostname}`}</span>
                  </td>
                  <td>
                    <StatusBadge status={node.state} />
                  </td>
                  <td safe>{`${(node.heartbeatAgeMs / 1000).toFixed(1)} s ago`}</td>
                  <td>
                    <Time at={node.startedAt} />
                  </td>
                  <td class="mono" safe>
                    {node.url ?? '—'}
                  </td>
                  <td>
                    <span safe>{String(node.phones.length)}</span>
                    {node.phones.length > 0 ? (
                      <span
                        class="mono muted"
                        safe
                      >{` · ${node.phones.slice(0, PHONES_SHOWN).join(', ')}${node.phones.length > PHONES_SHOWN ? ` and ${node.phones.length - PHONES_SHOWN} more` : ''}`}</span>
                    ) : (
                      ''
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p safe>
          {view.unownedPhones.length === 0
            ? 'Every number has a live owner.'
            : `Without a live owner now (a takeover is due): ${view.unownedPhones.join(', ')}`}
        </p>
      </section>
      <section class="card" aria-labelledby="tasks-heading">
        <h2 id="tasks-heading">Periodic tasks</h2>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Node</th>
                <th scope="col">Task</th>
                <th scope="col">Runs on</th>
                <th scope="col">Every</th>
                <th scope="col">Runs</th>
                <th scope="col">Failures</th>
                <th scope="col">Last run</th>
              </tr>
            </thead>
            <tbody>
              {view.nodes
                .filter((node) => node.state === 'live')
                .flatMap((node) => {
                  const tasks = view.tasks.get(node.id) ?? null;
                  if (tasks === null) {
                    return [
                      <tr>
                        <td safe>{node.name}</td>
                        <td colspan="6" class="muted">
                          Did not answer with its tasks.
                        </td>
                      </tr>,
                    ];
                  }
                  return tasks.map((task) => (
                    <tr>
                      <td safe>{node.name}</td>
                      <td class="mono" safe>
                        {task.name}
                      </td>
                      <td>{task.scope === 'owner' ? 'numbers it owns' : 'every node'}</td>
                      <td safe>{formatInterval(task.intervalMs)}</td>
                      <td safe>{String(task.runs)}</td>
                      <td safe>{String(task.failures)}</td>
                      <td>{task.lastRunAt === null ? 'not yet' : <Time at={new Date(task.lastRunAt)} />}</td>
                    </tr>
                  ));
                })}
            </tbody>
          </table>
        </div>
      </section>
      <section class="card" aria-labelledby="changes-heading">
        <h2 id="changes-heading">Recent changes of owner</h2>
        {view.recentChanges.length === 0 ? (
          <p class="muted">No number has changed owner yet.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Number</th>
                  <th scope="col">What</th>
                  <th scope="col">From</th>
                  <th scope="col">To</th>
                  <th scope="col">Epoch</th>
                </tr>
              </thead>
              <tbody>
                {view.recentChanges.map((change) => (
                  <tr>
                    <td>
                      <Time at={new Date(change.at)} />
                    </td>
                    <td class="mono" safe>
                      {change.phone}
                    </td>
                    <td safe>{change.reason.replace(/_/g, ' ')}</td>
                    <td class="mono" safe>
                      {change.fromNodeId ?? '—'}
                    </td>
                    <td class="mono" safe>
                      {change.toNodeId ?? '—'}
                    </td>
                    <td safe>{String(change.epoch)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </OperatorFrame>
  );
}

function formatInterval(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms >= 1_000 ? `${(ms / 1_000).toFixed(1)} s` : `${ms} ms`;
}
