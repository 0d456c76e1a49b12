import type { Children } from '@kitajs/html';
import type { PageContext } from '../context.ts';
import type { AccountRef } from '../presenters/operator.ts';
import { ChoiceOptions, PageHeader } from './components.tsx';
import { Layout } from './layout.tsx';

export type OperatorSection = 'accounts' | 'users' | 'numbers' | 'cluster' | 'system' | 'audit' | 'tokens';

const OPERATOR_LINKS: Array<{ section: OperatorSection; href: string; label: string }> = [
  { section: 'accounts', href: '/operator/accounts', label: 'Accounts' },
  { section: 'users', href: '/operator/users', label: 'Users' },
  { section: 'numbers', href: '/operator/numbers', label: 'Numbers' },
  { section: 'cluster', href: '/operator/cluster', label: 'Cluster' },
  { section: 'system', href: '/operator/system', label: 'System' },
  { section: 'audit', href: '/operator/audit', label: 'Audit log' },
  { section: 'tokens', href: '/operator/tokens', label: 'Tokens' },
];

/** Every operator page: the layout, its heading and the console's own sub-navigation. */
export function OperatorFrame(props: { context: PageContext; section: OperatorSection; title: string; children?: Children }): JSX.Element {
  return (
    <Layout context={props.context}>
      <nav class="subnav actions" aria-label="Operator console">
        {OPERATOR_LINKS.map((link) => (
          <a href={link.href} class="button small" aria-current={link.section === props.section ? 'page' : undefined} safe>
            {link.label}
          </a>
        ))}
      </nav>
      <PageHeader title={props.title} />
      {props.children ?? ''}
    </Layout>
  );
}

export { ChoiceOptions };

export function AccountOptions(props: { accounts: AccountRef[]; selected: string }): JSX.Element {
  return (
    <ChoiceOptions choices={props.accounts.map((account) => ({ value: account.id, label: account.name }))} selected={props.selected} />
  );
}

/** A link to an account's operator page. */
export function AccountLink(props: { account: AccountRef | null }): JSX.Element {
  if (props.account === null) return <span class="muted">none</span>;
  return (
    <a href={`/operator/accounts/${encodeURIComponent(props.account.id)}`} safe>
      {props.account.name}
    </a>
  );
}
