import type { PageContext } from '../context.ts';
import type { AccountSummaryView, Choice } from '../presenters/operator.ts';
import { formatCount } from '../presenters/shared.ts';
import { EmptyState, ErrorSummary, PostForm, Time } from './components.tsx';
import { AccountLink, ChoiceOptions, OperatorFrame } from './operator-shared.tsx';

export interface CreateAccountForm {
  name: string;
  plan: string;
  error: string | undefined;
}

export function OperatorAccountsPage(props: {
  context: PageContext;
  accounts: AccountSummaryView[];
  plans: Choice[];
  form: CreateAccountForm;
}): JSX.Element {
  const { context, form } = props;
  return (
    <OperatorFrame context={context} section="accounts" title="Accounts">
      {props.accounts.length === 0 ? (
        <EmptyState empty={{ text: 'No accounts yet. Create the first one below, then add its owner and a number.' }} />
      ) : (
        <AccountsTable accounts={props.accounts} />
      )}
      <h2 id="create-account-heading">Create account</h2>
      <section class="card" aria-labelledby="create-account-heading">
        <ErrorSummary error={form.error} />
        <PostForm action="/operator/accounts" csrfToken={context.csrfToken} class="row">
          <div class="field">
            <label for="account-name">Account name</label>
            <input id="account-name" name="name" type="text" required maxlength="200" value={form.name} />
          </div>
          <div class="field">
            <label for="account-plan">Plan</label>
            <select id="account-plan" name="plan">
              <ChoiceOptions choices={props.plans} selected={form.plan} />
            </select>
          </div>
          <button type="submit" class="button primary">
            Create account
          </button>
        </PostForm>
      </section>
    </OperatorFrame>
  );
}

export function limitText(limit: number | null, isCustom: boolean): string {
  if (limit === null) return 'unlimited';
  return `${formatCount(limit)}${isCustom ? ' (custom)' : ''}`;
}

function AccountsTable(props: { accounts: AccountSummaryView[] }): JSX.Element {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Account</th>
            <th scope="col">Plan</th>
            <th scope="col">Monthly limit</th>
            <th scope="col">Used this month</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {props.accounts.map((account) => (
            <tr>
              <td>
                <AccountLink account={account} />
              </td>
              <td safe>{account.plan}</td>
              <td safe>{limitText(account.limit, account.isCustomLimit)}</td>
              <td safe>{formatCount(account.used)}</td>
              <td>
                <Time at={account.createdAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
