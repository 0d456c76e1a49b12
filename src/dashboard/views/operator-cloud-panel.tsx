import { CLOUD_SECRET_LIMITS, META_ID_MAX_DIGITS } from '../../domain/cloud-settings.ts';
import type { CloudFormValues, CloudPanelView } from '../presenters/number-cloud.ts';
import { ActionButton, PostForm, TextField } from './components.tsx';

/** The token and secrets, each a password field that is never filled in: the page does not have them. */
const SECRETS = [
  ['access_token', 'Access token'],
  ['app_secret', 'App secret'],
  ['verify_token', 'Verify token'],
] as const;

const fieldId = (name: string) => `cloud-${name.replace(/_/g, '-')}`;

/** One of Meta's ids: digits, shown again as typed after a refusal. */
function MetaIdField(props: { name: string; label: string; placeholder: string; hint?: string; value: string }): JSX.Element {
  return (
    <TextField
      id={fieldId(props.name)}
      name={props.name}
      label={props.label}
      inputmode="numeric"
      pattern={`[0-9]{1,${META_ID_MAX_DIGITS}}`}
      maxlength={META_ID_MAX_DIGITS}
      required
      class="mono"
      placeholder={props.placeholder}
      hint={props.hint}
      value={props.value}
    />
  );
}

/**
 * A `cloud` number's Cloud API settings on its console page (docs/cloud-api.md): Meta's ids in
 * clear, the token and secrets only as set or not (the page never has them), the callback URL to
 * give Meta, the form that sets all five, and Clear. A refused form comes back with the ids typed;
 * the secret fields are always empty.
 */
export function CloudPanel(props: { cloud: CloudPanelView; form: CloudFormValues | undefined; csrfToken: string }): JSX.Element {
  const { cloud } = props;
  const secrets = cloud.secretsSet ? 'set (sealed, never shown)' : 'not set';
  return (
    <section class="card" id="cloud" aria-labelledby="cloud-heading">
      <h2 id="cloud-heading">Cloud API</h2>
      <p class="muted small">
        Meta’s ids and the token this number reaches Meta’s Cloud API with. Without them it sends nothing and its session is failed.
      </p>
      <dl class="facts">
        <dt>Phone number id</dt>
        <dd class="mono" safe>
          {cloud.phoneNumberId ?? 'not set'}
        </dd>
        <dt>Business account id</dt>
        <dd class="mono" safe>
          {cloud.businessAccountId ?? 'not set'}
        </dd>
        {SECRETS.map(([, label]) => (
          <>
            <dt>{label}</dt>
            <dd>{secrets}</dd>
          </>
        ))}
        <dt>Callback URL</dt>
        <dd>
          <code id="cloud-callback" safe>
            {cloud.callbackUrl ?? cloud.callbackPath}
          </code>
          {cloud.callbackUrl === null ? (
            <div class="muted small">
              This gateway’s public address followed by this path: WAGW_PUBLIC_URL is not set, so the console cannot tell the whole URL.
            </div>
          ) : (
            ''
          )}
        </dd>
      </dl>
      <p class="muted small">
        In the Meta app’s WhatsApp configuration, give this callback URL and the verify token below, and subscribe to the messages field.
      </p>
      <PostForm action={cloud.action} csrfToken={props.csrfToken} class="stack">
        <MetaIdField
          name="phone_number_id"
          label="Phone number id"
          placeholder="106540352242922"
          hint="WhatsApp Manager, API Setup: the id of the business phone number."
          value={props.form?.phoneNumberId ?? cloud.phoneNumberId ?? ''}
        />
        <MetaIdField
          name="business_account_id"
          label="WhatsApp Business Account id"
          placeholder="102290129340398"
          value={props.form?.businessAccountId ?? cloud.businessAccountId ?? ''}
        />
        {SECRETS.map(([name, label]) => (
          <TextField
            id={fieldId(name)}
            name={name}
            label={label}
            type="password"
            autocomplete="off"
            minlength={CLOUD_SECRET_LIMITS.minLength}
            maxlength={CLOUD_SECRET_LIMITS.maxLength}
            required
            describedBy="cloud-secrets-hint"
            value=""
          />
        ))}
        <p id="cloud-secrets-hint" class="hint">
          A system user’s permanent access token (whatsapp_business_messaging and whatsapp_business_management), the app secret (App
          settings, Basic) and a verify token of your choosing: {CLOUD_SECRET_LIMITS.minLength} to {CLOUD_SECRET_LIMITS.maxLength}{' '}
          characters without spaces, typed whole each time, since the stored ones are never shown.
        </p>
        <button type="submit" class="button primary">
          {cloud.secretsSet ? 'Replace settings' : 'Save settings'}
        </button>
      </PostForm>
      {cloud.secretsSet ? (
        <ActionButton
          action={`${cloud.action}/clear`}
          csrfToken={props.csrfToken}
          label="Clear settings"
          danger
          confirm="Forget the Cloud API settings? The number sends nothing until they are set again."
        />
      ) : (
        ''
      )}
    </section>
  );
}
