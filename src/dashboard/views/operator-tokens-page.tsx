import type { OperatorToken } from '../../domain/operator-token.ts';
import type { PageContext } from '../context.ts';
import { ActionButton, EmptyState, ErrorSummary, PostForm, SecretReveal, Time } from './components.tsx';
import { OperatorFrame } from './operator-shared.tsx';

/** What the page shows beside the list: the form as typed, its refusal, or a token just made. */
export interface OperatorTokensState {
  name: string;
  error?: string;
  created?: { name: string; value: string };
}

/** `/operator/tokens`: every operator token, newest first, with the form that makes one. */
export function OperatorTokensPage(props: { context: PageContext; tokens: OperatorToken[]; state: OperatorTokensState }): JSX.Element {
  const { context, tokens, state } = props;
  return (
    <OperatorFrame context={context} section="tokens" title="Operator tokens">
      <p class="muted">
        A token lets a program use the operator API (accounts, numbers and their sessions, the audit log) as an operator would. Keep it
        secret; revoke one that is no longer needed or may have leaked.
      </p>
      {state.created === undefined ? (
        ''
      ) : (
        <section class="card">
          <SecretReveal
            id="created-token"
            label={`Token "${state.created.name}": copy it now, it is not shown again`}
            value={state.created.value}
          />
        </section>
      )}
      <section class="card">
        <ErrorSummary error={state.error} />
        <PostForm action="/operator/tokens" csrfToken={context.csrfToken} class="row">
          <label for="token-name">Name</label>
          <input id="token-name" name="name" type="text" required maxlength={100} placeholder="onboarding script" value={state.name} />
          <button type="submit" class="button primary">
            Create token
          </button>
        </PostForm>
      </section>
      {tokens.length === 0 ? (
        <EmptyState empty={{ text: 'No operator tokens yet.' }} />
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Token</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">State</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr>
                  <td safe>{token.name}</td>
                  <td class="mono" safe>
                    {token.hint}
                  </td>
                  <td>
                    <Time at={token.createdAt} />
                  </td>
                  <td>{token.lastUsedAt === null ? <span class="muted">never</span> : <Time at={token.lastUsedAt} />}</td>
                  <td>
                    {token.revokedAt === null ? (
                      'active'
                    ) : (
                      <span class="muted">
                        revoked <Time at={token.revokedAt} />
                      </span>
                    )}
                  </td>
                  <td>
                    {token.revokedAt === null ? (
                      <ActionButton
                        action={`/operator/tokens/${encodeURIComponent(token.id)}/revoke`}
                        csrfToken={context.csrfToken}
                        label="Revoke"
                        danger
                        confirm={`Revoke the token "${token.name}"? Programs using it are refused at once.`}
                      />
                    ) : (
                      ''
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </OperatorFrame>
  );
}
