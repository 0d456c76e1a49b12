import type { PageContext } from '../context.ts';
import type { NumbersView, SimulationDraft } from '../presenters/numbers.ts';
import type { NumberRowView } from '../presenters/shared.ts';
import { ErrorSummary, PageHeader, PostForm } from './components.tsx';
import { Layout } from './layout.tsx';
import { NumbersTable } from './shared-tables.tsx';

export function NumbersPage(props: { context: PageContext; view: NumbersView }): JSX.Element {
  const { context, view } = props;
  return (
    <Layout context={context}>
      <PageHeader title="Numbers" />
      <div data-status-source="/numbers/status.json">
        <NumbersTable numbers={view.numbers} empty={{ text: 'No numbers yet. The operator links WhatsApp numbers to your account.' }} />
      </div>
      {view.sandboxNumbers.length === 0 ? (
        ''
      ) : (
        <>
          <h2>Simulate an incoming message</h2>
          <p class="muted">
            Sandbox numbers are not connected to WhatsApp. A simulated message arrives exactly as a real one would: it is stored,
            listed in Messages and sent to your webhooks.
          </p>
          <div class="grid">
            {view.sandboxNumbers.map((number) => (
              <SimulateForm number={number} csrfToken={context.csrfToken} draft={view.draft?.numberId === number.id ? view.draft : undefined} />
            ))}
          </div>
        </>
      )}
    </Layout>
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
      <PostForm action={`/numbers/${encodeURIComponent(number.id)}/simulate`} csrfToken={props.csrfToken} class="stack" enctype="multipart/form-data">
        <label for={fromId}>From phone</label>
        <input id={fromId} name="from_phone" type="tel" autocomplete="off" required aria-describedby={hintId} value={draft?.fromPhone ?? ''} />
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
