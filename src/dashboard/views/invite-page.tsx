import type { PageContext } from '../context.ts';
import type { InviteView } from '../presenters/team.ts';
import { ErrorSummary, PostForm, Time } from './components.tsx';
import { Layout } from './layout.tsx';

export interface InviteFormState {
  email: string;
  error: string | undefined;
}

/** The page behind an invite link: who invites, as what, and the form to join. */
export function InvitePage(props: { context: PageContext; token: string; view: InviteView; form: InviteFormState }): JSX.Element {
  const { context, view, form } = props;
  return (
    <Layout context={context}>
      <section class="card narrow">
        <h1 safe>{`Join ${view.accountName}`}</h1>
        <p safe>{`You are invited to the account ${view.accountName} as ${article(view.role)} ${view.role}.`}</p>
        <p class="muted small">
          This link expires <Time at={view.expiresAt} /> and works once.
        </p>
        {view.signedInAs === null ? (
          ''
        ) : (
          <p class="hint" safe>{`You are signed in as ${view.signedInAs}. Joining signs you out of that user and in as the new one.`}</p>
        )}
        <ErrorSummary error={form.error} />
        <PostForm action={`/invite/${encodeURIComponent(props.token)}`} csrfToken={context.csrfToken} class="stack">
          <label for="invite-email">Email</label>
          <input id="invite-email" name="email" type="email" autocomplete="username" required autofocus value={form.email} />
          <label for="invite-password">Password</label>
          <input
            id="invite-password"
            name="password"
            type="password"
            autocomplete="new-password"
            minlength="12"
            required
            aria-describedby="invite-password-hint"
          />
          <p id="invite-password-hint" class="hint">
            At least 12 characters. You sign in with this email and password from now on.
          </p>
          <button type="submit" class="button primary">
            Join account
          </button>
        </PostForm>
      </section>
    </Layout>
  );
}

function article(role: string): string {
  return role === 'owner' || role === 'admin' ? 'an' : 'a';
}
