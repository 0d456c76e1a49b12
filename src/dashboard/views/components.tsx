import type { Children } from '@kitajs/html';
import type { Choice } from '../presenters/shared.ts';
/** Small building blocks shared by the pages. Every piece of user text passes through `safe`. */

export function PageHeader(props: { title: string; children?: Children }): JSX.Element {
  return (
    <div class="page-header">
      <h1 safe>{props.title}</h1>
      {props.children ?? ''}
    </div>
  );
}

/** A form that changes state: POST with the session's CSRF token. */
export function PostForm(props: {
  action: string;
  csrfToken: string;
  class?: string;
  children?: Children;
  confirm?: string;
  enctype?: 'multipart/form-data';
}): JSX.Element {
  return (
    <form method="post" action={props.action} class={props.class} data-confirm={props.confirm} enctype={props.enctype}>
      <input type="hidden" name="_csrf" value={props.csrfToken} />
      {props.children ?? ''}
    </form>
  );
}

/** A one-button form, such as Revoke or Delete. */
export function ActionButton(props: { action: string; csrfToken: string; label: string; danger?: boolean; confirm?: string }): JSX.Element {
  return (
    <PostForm action={props.action} csrfToken={props.csrfToken} class="inline" confirm={props.confirm}>
      <button type="submit" class={props.danger === true ? 'button danger small' : 'button small'} safe>
        {props.label}
      </button>
    </PostForm>
  );
}

export function ErrorSummary(props: { error: string | undefined }): JSX.Element {
  if (props.error === undefined) return '';
  return (
    <p class="form-error" role="alert" safe>
      {props.error}
    </p>
  );
}

/** What a list shows when it has nothing, with the next step as a link when there is one. */
export interface Empty {
  text: string;
  action?: { href: string; label: string };
}

export function EmptyState(props: { empty: Empty }): JSX.Element {
  const { text, action } = props.empty;
  return (
    <p class="empty">
      <span safe>{text}</span>
      {action === undefined ? (
        ''
      ) : (
        <>
          {' — '}
          <a href={action.href} safe>
            {action.label}
          </a>
        </>
      )}
    </p>
  );
}

export function StatusBadge(props: { status: string; id?: string }): JSX.Element {
  return (
    <span class={`badge status-${props.status.replace(/[^a-z_]/g, '')}`} data-number-status={props.id} safe>
      {props.status.replace(/_/g, ' ')}
    </span>
  );
}

/** A number's session status, with its reason underneath when there is one. */
export function NumberStatus(props: { id: string; status: string; reason: string | null }): JSX.Element {
  return (
    <>
      <StatusBadge status={props.status} id={props.id} />
      {props.reason === null ? (
        ''
      ) : (
        <div class="muted small" safe>
          {props.reason}
        </div>
      )}
    </>
  );
}

/** A user's email in a table of users, with a badge after it where one applies ("you", "operator"). */
export function UserEmail(props: { email: string; badge: string | false }): JSX.Element {
  return (
    <>
      <span safe>{props.email}</span>
      {props.badge === false ? (
        ''
      ) : (
        <>
          {' '}
          <span class="badge" safe>
            {props.badge}
          </span>
        </>
      )}
    </>
  );
}

/** A time in UTC, readable, with the exact instant for machines and tooltips. */
export function Time(props: { at: Date | null; empty?: string }): JSX.Element {
  if (props.at === null)
    return (
      <span class="muted" safe>
        {props.empty ?? 'never'}
      </span>
    );
  const iso = props.at.toISOString();
  return (
    <time datetime={iso} title={iso} safe>
      {`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}
    </time>
  );
}

/** A secret shown once, with a copy button that app.js wires up. */
export function SecretReveal(props: { id: string; label: string; value: string }): JSX.Element {
  return (
    <div class="secret">
      <label for={props.id} safe>
        {props.label}
      </label>
      <div class="secret-row">
        <input id={props.id} type="text" readonly value={props.value} class="mono" />
        <button type="button" class="button" data-copy-target={props.id}>
          Copy
        </button>
      </div>
    </div>
  );
}

export type { Choice };

export function ChoiceOptions(props: { choices: readonly Choice[]; selected: string }): JSX.Element {
  return (
    <>
      {props.choices.map((choice) => (
        <option value={choice.value} selected={choice.value === props.selected} safe>
          {choice.label}
        </option>
      ))}
    </>
  );
}

/** The password field of forms that make a user for someone else: blank means "generate one". */
export function GeneratedPasswordField(props: { id: string }): JSX.Element {
  return (
    <div class="field">
      <label for={props.id}>Password</label>
      <input
        id={props.id}
        name="password"
        type="password"
        autocomplete="new-password"
        minlength="12"
        aria-describedby={`${props.id}-hint`}
      />
      <p id={`${props.id}-hint`} class="hint">
        Leave blank to generate one
      </p>
    </div>
  );
}

/** An input with its label, and a hint of its own below it when there is one. */
export interface TextFieldProps {
  id: string;
  name: string;
  label: string;
  type?: 'text' | 'url' | 'password';
  value?: string;
  placeholder?: string;
  minlength?: number;
  maxlength?: number;
  inputmode?: 'numeric';
  pattern?: string;
  required?: boolean;
  autocomplete?: 'off';
  class?: string;
  /** A hint shared with other fields, by its id; ignored when the field has a `hint` of its own. */
  describedBy?: string;
  /** The field's own hint, shown below it as `{id}-hint`. */
  hint?: string;
}

export function TextField(props: TextFieldProps): JSX.Element {
  const hintId = props.hint === undefined ? props.describedBy : `${props.id}-hint`;
  return (
    <>
      <label for={props.id} safe>
        {props.label}
      </label>
      <input
        id={props.id}
        name={props.name}
        type={props.type ?? 'text'}
        placeholder={props.placeholder}
        minlength={props.minlength}
        maxlength={props.maxlength}
        inputmode={props.inputmode}
        pattern={props.pattern}
        required={props.required}
        autocomplete={props.autocomplete}
        class={props.class}
        aria-describedby={hintId}
        value={props.value}
      />
      {props.hint === undefined ? (
        ''
      ) : (
        <p id={hintId} class="hint" safe>
          {props.hint}
        </p>
      )}
    </>
  );
}
