import type { PageContext } from '../context.ts';
import type { OpenInviteView, OrphanedKeyView, TeamMemberView, TeamPageState, TeamView } from '../presenters/team.ts';
import { userRoles } from '../../domain/model.ts';
import {
  ActionButton,
  ChoiceOptions,
  EmptyState,
  ErrorSummary,
  PageHeader,
  PostForm,
  SecretReveal,
  Time,
  UserEmail,
  type Choice,
} from './components.tsx';
import { Layout } from './layout.tsx';

/** What each role may do, in the words the role pickers show. */
const ROLE_CHOICES: readonly Choice[] = [
  { value: 'member', label: 'Member — sees everything, uses the sandbox' },
  { value: 'admin', label: 'Admin — also manages API keys and webhooks' },
  { value: 'owner', label: 'Owner — also manages the team' },
];

export function RoleOptions(props: { selected: string }): JSX.Element {
  return <ChoiceOptions choices={ROLE_CHOICES} selected={props.selected} />;
}

// The table's compact picker shows bare role names; the explanations are in the invite form.
const SHORT_ROLE_CHOICES: readonly Choice[] = userRoles.map((role) => ({ value: role, label: role }));

export function TeamPage(props: { context: PageContext; view: TeamView; state: TeamPageState }): JSX.Element {
  const { context, view, state } = props;
  return (
    <Layout context={context}>
      <PageHeader title="Team" />
      <p class="muted" safe>{`The users of ${view.accountName}.`}</p>
      <ErrorSummary error={state.error} />
      {state.inviteLink === undefined ? (
        ''
      ) : (
        <section class="card" aria-labelledby="new-invite-heading">
          <h2 id="new-invite-heading">Invite link created</h2>
          <SecretReveal id="invite-link" label="Send this link to the new user" value={state.inviteLink} />
          <p class="hint">It works once and expires in 7 days. It is shown only now; if it gets lost, revoke it and create another.</p>
        </section>
      )}
      <MembersTable members={view.members} viewerIsOwner={view.viewerIsOwner} csrfToken={context.csrfToken} />
      {view.viewerIsOwner ? (
        <InviteSection invites={view.invites} state={state} csrfToken={context.csrfToken} />
      ) : (
        <p class="muted small">Only owners can invite users and change roles.</p>
      )}
      {view.viewerIsOwner && view.orphanedKeys.length > 0 ? <OrphanedKeys keys={view.orphanedKeys} csrfToken={context.csrfToken} /> : null}
    </Layout>
  );
}

function MembersTable(props: { members: TeamMemberView[]; viewerIsOwner: boolean; csrfToken: string }): JSX.Element {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Added</th>
            {props.viewerIsOwner ? <th scope="col">Manage</th> : ''}
          </tr>
        </thead>
        <tbody>
          {props.members.map((member) => (
            <tr>
              <td>
                <UserEmail email={member.email} badge={member.isViewer && 'you'} />
              </td>
              <td>
                <span class={`badge role-${member.role}`}>{member.role}</span>
              </td>
              <td>
                <Time at={member.createdAt} />
              </td>
              {props.viewerIsOwner ? (
                <td>
                  <MemberActions member={member} csrfToken={props.csrfToken} />
                </td>
              ) : (
                ''
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function MemberActions(props: { member: TeamMemberView; csrfToken: string }): JSX.Element {
  const { member } = props;
  const path = `/team/${encodeURIComponent(member.id)}`;
  return (
    <div class="actions">
      <PostForm action={`${path}/role`} csrfToken={props.csrfToken} class="inline">
        <select name="role" aria-label={`Role for ${member.email}`}>
          <ChoiceOptions choices={SHORT_ROLE_CHOICES} selected={member.role} />
        </select>{' '}
        <button type="submit" class="button small">
          Change role
        </button>
      </PostForm>
      {member.isViewer ? (
        ''
      ) : (
        <ActionButton
          action={`${path}/remove`}
          csrfToken={props.csrfToken}
          label="Remove"
          danger
          confirm={`Remove ${member.email} from the account? They are signed out and can no longer sign in.`}
        />
      )}
    </div>
  );
}

function InviteSection(props: { invites: OpenInviteView[]; state: TeamPageState; csrfToken: string }): JSX.Element {
  return (
    <>
      <h2>Invite a user</h2>
      <section class="card">
        <PostForm action="/team/invites" csrfToken={props.csrfToken} class="row">
          <div class="field">
            <label for="invite-role">Role</label>
            <select id="invite-role" name="role">
              <RoleOptions selected={props.state.inviteRole} />
            </select>
          </div>
          <button type="submit" class="button primary">
            Create invite link
          </button>
        </PostForm>
        <p class="hint">The new user opens the link, picks a password and is in. No email is sent: you pass the link on.</p>
      </section>
      <h2>Open invites</h2>
      {props.invites.length === 0 ? (
        <EmptyState empty={{ text: 'No open invites. Create an invite link above to add someone.' }} />
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Role</th>
                <th scope="col">Made by</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Manage</th>
              </tr>
            </thead>
            <tbody>
              {props.invites.map((invite) => (
                <tr>
                  <td>{invite.role}</td>
                  <td safe>{invite.createdBy}</td>
                  <td>
                    <Time at={invite.createdAt} />
                  </td>
                  <td>
                    <Time at={invite.expiresAt} />
                  </td>
                  <td>
                    <ActionButton
                      action={`/team/invites/${encodeURIComponent(invite.id)}/revoke`}
                      csrfToken={props.csrfToken}
                      label="Revoke"
                      danger
                      confirm="Revoke this invite? Its link stops working."
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/**
 * Keys of removed users keep working, so that a removal does not take production down; they are
 * listed here, with their maker, for the owners to revoke once they have replaced them.
 */
function OrphanedKeys(props: { keys: OrphanedKeyView[]; csrfToken: string }): JSX.Element {
  return (
    <>
      <h2>API keys of removed users</h2>
      <p class="hint">These keys still work. Revoke each once whatever uses it has a new key.</p>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Made by</th>
              <th scope="col">Last used</th>
              <th scope="col">Manage</th>
            </tr>
          </thead>
          <tbody>
            {props.keys.map((key) => (
              <tr>
                <td safe>{key.name}</td>
                <td class="mono" safe>
                  {key.hint}
                </td>
                <td safe>{key.createdBy}</td>
                <td>
                  <Time at={key.lastUsedAt} empty="never" />
                </td>
                <td>
                  <ActionButton
                    action={`/keys/${encodeURIComponent(key.id)}/revoke`}
                    csrfToken={props.csrfToken}
                    label="Revoke"
                    danger
                    confirm="Revoke this key? Requests using it are refused at once."
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
