import type { NumberSendingView, PolicyView } from '../presenters/number-sending.ts';
import { ActionButton, ChoiceOptions, PostForm, Time } from './components.tsx';
import { SendsChart } from './sends-chart.tsx';

/**
 * The "Sending" section of the numbers page: the account's default send policy, then each
 * number's policy in force, its queue and its last day's sends (docs/send-governor.md).
 */
export function SendingSection(props: {
  sending: NumberSendingView[];
  accountPolicy: PolicyView;
  canChange: boolean;
  csrfToken: string;
}): JSX.Element {
  return (
    <section aria-labelledby="sending">
      <h2 id="sending">Sending</h2>
      <p class="muted">
        The send governor paces each number's sends so that WhatsApp does not restrict it. A message that must wait is queued and leaves at
        its time; the API answers it 202 queued.
      </p>
      <div class="grid">
        <section class="card stack" aria-labelledby="account-send-policy">
          <h3 id="account-send-policy">Account default</h3>
          <PolicySummary policy={props.accountPolicy} />
          {props.canChange ? (
            <PolicyForm action="/numbers/default_send_policy" policy={props.accountPolicy} id="account" csrfToken={props.csrfToken} />
          ) : (
            ''
          )}
        </section>
        {props.sending.map((number) => (
          <NumberSendingCard number={number} canChange={props.canChange} csrfToken={props.csrfToken} />
        ))}
      </div>
    </section>
  );
}

function NumberSendingCard(props: { number: NumberSendingView; canChange: boolean; csrfToken: string }): JSX.Element {
  const { number } = props;
  const path = `/numbers/${encodeURIComponent(number.id)}`;
  return (
    <section class="card stack" aria-labelledby={`sending-${number.id}`}>
      <h3 id={`sending-${number.id}`} class="mono" safe>{`Sending from ${number.phone}`}</h3>
      <PolicySummary policy={number.policy} />
      {props.canChange ? (
        <PolicyForm action={`${path}/send_policy`} policy={number.policy} id={number.id} csrfToken={props.csrfToken} />
      ) : (
        ''
      )}
      {number.newChatQuota === null ? '' : <p class="small" safe>{`WhatsApp's cap on new chats: ${number.newChatQuota}`}</p>}
      <h4>Queue</h4>
      <QueueSummary number={number} />
      {props.canChange && number.waiting > 0 ? (
        <ActionButton
          action={`${path}/clear_queue`}
          csrfToken={props.csrfToken}
          label="Clear queue"
          danger
          confirm={`Cancel all ${number.waiting} waiting message(s) of ${number.phone}? None of them will be sent.`}
        />
      ) : (
        ''
      )}
      <h4>Sends per hour</h4>
      <SendsChart chart={number.chart} id={`chart-${number.id}`} />
    </section>
  );
}

function PolicySummary(props: { policy: PolicyView }): JSX.Element {
  const { policy } = props;
  return (
    <>
      <p>
        <strong safe>{policy.name}</strong> <span class="muted" safe>{`(${policy.sourceText})`}</span>
      </p>
      {policy.figures.length === 0 ? (
        <p class="muted small">The governor is off: every send leaves at once.</p>
      ) : (
        <ul class="small">
          {policy.figures.map((figure) => (
            <li safe>{figure}</li>
          ))}
        </ul>
      )}
    </>
  );
}

function PolicyForm(props: { action: string; policy: PolicyView; id: string; csrfToken: string }): JSX.Element {
  const selectId = `send-policy-${props.id}`;
  return (
    <PostForm action={props.action} csrfToken={props.csrfToken} class="stack">
      <label for={selectId}>Send policy</label>
      <select id={selectId} name="send_policy">
        <ChoiceOptions choices={props.policy.choices} selected={props.policy.selected} />
      </select>
      <button type="submit" class="button">
        Save send policy
      </button>
    </PostForm>
  );
}

function QueueSummary(props: { number: NumberSendingView }): JSX.Element {
  const { number } = props;
  if (number.waiting === 0) return <p class="muted small">Nothing waits.</p>;
  return (
    <>
      <p>
        <strong safe>{`${number.waiting} waiting`}</strong>; the oldest since <Time at={number.oldestWaitingSince} />.
      </p>
      <ul class="small">
        {number.counts.map((count) => (
          <li safe>{`${count.count} for ${count.reason}`}</li>
        ))}
      </ul>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Leaves at</th>
              <th scope="col">To</th>
              <th scope="col">Waits for</th>
            </tr>
          </thead>
          <tbody>
            {number.next.map((message) => (
              <tr>
                <td>{message.scheduledFor === null ? 'once resumed' : <Time at={message.scheduledFor} />}</td>
                <td class="mono" safe>
                  {message.toPhone}
                </td>
                <td safe>{message.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
