import type { PageContext } from '../context.ts';
import type { GroupRowView, NumbersView, SimulationDraft } from '../presenters/numbers.ts';
import type { NumberRowView } from '../presenters/shared.ts';
import { EmptyState, ErrorSummary, PageHeader, PostForm } from './components.tsx';
import { Layout } from './layout.tsx';
import { SendingSection } from './number-sending.tsx';
import { NumberHealthCards } from './number-health.tsx';

export function NumbersPage(props: { context: PageContext; view: NumbersView }): JSX.Element {
  const { context, view } = props;
  return (
    <Layout context={context}>
      <PageHeader title="Numbers" />
      {view.numbers.length === 0 ? (
        <EmptyState empty={{ text: 'No numbers yet. The operator links WhatsApp numbers to your account.' }} />
      ) : (
        <div data-status-source="/numbers/status.json">
          <p class="muted">
            A paused number holds its sends until it resumes: a number with a send policy queues them, one without refuses them (503
            number_paused). Resume a restricted number only once WhatsApp has lifted the restriction.
          </p>
          <NumberHealthCards cards={view.health} csrfToken={context.csrfToken} />
        </div>
      )}
      {view.canChangeSettings && view.numbers.length > 0 ? (
        <>
          <h2>Calls</h2>
          <p class="muted">A number that rejects calls declines each one as it rings; `call` webhooks hear of every call either way.</p>
          <div class="grid">
            {view.numbers.map((number) => (
              <CallSettingsForm number={number} csrfToken={context.csrfToken} />
            ))}
          </div>
        </>
      ) : (
        ''
      )}
      {view.numbers.length > 0 ? (
        <SendingSection
          sending={view.sending}
          accountPolicy={view.accountPolicy}
          canChange={view.canChangeSettings}
          csrfToken={context.csrfToken}
        />
      ) : (
        ''
      )}
      <h2>Groups</h2>
      <GroupsTable groups={view.groups} />
      {view.sandboxNumbers.length === 0 ? (
        ''
      ) : (
        <>
          <h2>Simulate an incoming message</h2>
          <p class="muted">
            Sandbox numbers are not connected to WhatsApp. A simulated message arrives exactly as a real one would: it is stored, listed in
            Messages and sent to your webhooks.
          </p>
          <div class="grid">
            {view.sandboxNumbers.map((number) => (
              <SimulateForm
                number={number}
                csrfToken={context.csrfToken}
                draft={view.draft?.numberId === number.id ? view.draft : undefined}
              />
            ))}
          </div>
        </>
      )}
    </Layout>
  );
}

/** Numbers that hold their sends: why, since and until when, and (for owners and admins) a Resume button. */
/** Each number's groups as it last saw them; the API's GET /groups asks the session itself. */
function GroupsTable(props: { groups: GroupRowView[] }): JSX.Element {
  if (props.groups.length === 0)
    return (
      <EmptyState empty={{ text: 'Your numbers are in no groups yet, as far as the gateway has seen. Create one with POST /groups.' }} />
    );
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Number</th>
            <th scope="col">Group</th>
            <th scope="col">Participants</th>
            <th scope="col">Role</th>
          </tr>
        </thead>
        <tbody>
          {props.groups.map((group) => (
            <tr>
              <td class="mono" safe>
                {group.phone}
              </td>
              <td>
                <span safe>{group.subject}</span>{' '}
                <span class="muted mono" safe>
                  {group.groupId}
                </span>
              </td>
              <td safe>{String(group.size)}</td>
              <td>{group.isAdmin ? 'Admin' : 'Member'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CallSettingsForm(props: { number: NumberRowView; csrfToken: string }): JSX.Element {
  const { number } = props;
  const rejectId = `reject-${number.id}`;
  const replyId = `reply-${number.id}`;
  const replyHintId = `reply-hint-${number.id}`;
  return (
    <section class="card" aria-labelledby={`calls-${number.id}`}>
      <h3 id={`calls-${number.id}`} class="mono" safe>{`Calls to ${number.phone}`}</h3>
      <PostForm action={`/numbers/${encodeURIComponent(number.id)}/calls`} csrfToken={props.csrfToken} class="stack">
        <label for={rejectId}>
          <input id={rejectId} name="reject_calls" type="checkbox" checked={number.rejectCalls} /> Reject calls
        </label>
        <label for={replyId}>Reply to a rejected caller (optional)</label>
        <textarea id={replyId} name="call_reply_text" aria-describedby={replyHintId} safe>
          {number.callReplyText ?? ''}
        </textarea>
        <p id={replyHintId} class="hint">
          Sent to the caller as a message, which counts in the monthly volume. Leave it empty to send nothing.
        </p>
        <button type="submit" class="button">
          Save call settings
        </button>
      </PostForm>
    </section>
  );
}

function SimulateForm(props: { number: NumberRowView; csrfToken: string; draft: SimulationDraft | undefined }): JSX.Element {
  const { number, draft } = props;
  const fromId = `from-${number.id}`;
  const messageId = `message-${number.id}`;
  const hintId = `from-hint-${number.id}`;
  const fileId = `file-${number.id}`;
  const fileHintId = `file-hint-${number.id}`;
  return (
    <section class="card" aria-labelledby={`simulate-${number.id}`}>
      <h3 id={`simulate-${number.id}`} class="mono" safe>{`To ${number.phone}`}</h3>
      <ErrorSummary error={draft?.error} />
      <PostForm
        action={`/numbers/${encodeURIComponent(number.id)}/simulate`}
        csrfToken={props.csrfToken}
        class="stack"
        enctype="multipart/form-data"
      >
        <label for={fromId}>From phone</label>
        <input
          id={fromId}
          name="from_phone"
          type="tel"
          autocomplete="off"
          required
          aria-describedby={hintId}
          value={draft?.fromPhone ?? ''}
        />
        <p id={hintId} class="hint">
          The sender, with its country code, e.g. +447700900123.
        </p>
        <label for={messageId}>Message</label>
        <textarea id={messageId} name="message" safe>
          {draft?.message ?? ''}
        </textarea>
        <label for={fileId}>File (optional)</label>
        <input id={fileId} name="file" type="file" aria-describedby={fileHintId} />
        <p id={fileHintId} class="hint">
          A photo, voice note, video or document of up to 16 MiB; the message becomes its caption.
        </p>
        <button type="submit" class="button primary">
          Simulate incoming message
        </button>
      </PostForm>
    </section>
  );
}
