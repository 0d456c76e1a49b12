import type { PageContext } from '../context.ts';
import { ErrorSummary, PostForm } from './components.tsx';
import { Layout } from './layout.tsx';

export interface SignInView {
  email: string;
  next: string;
  error: string | undefined;
}

export function SignInPage(props: { context: PageContext; view: SignInView }): JSX.Element {
  const { context, view } = props;
  return (
    <Layout context={context}>
      <section class="card narrow">
        <h1>Sign in</h1>
        <ErrorSummary error={view.error} />
        <PostForm action="/login" csrfToken={context.csrfToken} class="stack">
          <input type="hidden" name="next" value={view.next} />
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required autofocus value={view.email} />
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required />
          <button type="submit" class="button primary">
            Sign in
          </button>
        </PostForm>
        <p class="muted small">
          First start? The operator's email and password were printed by <code>npm start</code>.
        </p>
      </section>
    </Layout>
  );
}

export function ChangePasswordPage(props: { context: PageContext; error: string | undefined }): JSX.Element {
  const { context } = props;
  return (
    <Layout context={context}>
      <section class="card narrow">
        <h1>Change your password</h1>
        <ErrorSummary error={props.error} />
        <PostForm action="/account/password" csrfToken={context.csrfToken} class="stack">
          <label for="current_password">Current password</label>
          <input id="current_password" name="current_password" type="password" autocomplete="current-password" required />
          <label for="new_password">New password</label>
          <input
            id="new_password"
            name="new_password"
            type="password"
            autocomplete="new-password"
            minlength="12"
            required
            aria-describedby="new-password-hint"
          />
          <p id="new-password-hint" class="hint">
            At least 12 characters. Your other sessions are signed out.
          </p>
          <button type="submit" class="button primary">
            Change password
          </button>
        </PostForm>
      </section>
    </Layout>
  );
}

export function ErrorPage(props: { context: PageContext; status: number; message: string }): JSX.Element {
  const { context } = props;
  return (
    <Layout context={context}>
      <section class="card narrow">
        <h1>{props.status === 404 ? 'Not found' : props.status === 403 ? 'Not allowed' : 'Something went wrong'}</h1>
        <p safe>{props.message}</p>
        <p>
          <a href="/">Back to the dashboard</a>
        </p>
      </section>
    </Layout>
  );
}
