import type { LinkPanelView } from '../presenters/number-linking.ts';
import { ActionButton, PostForm } from './components.tsx';

const NOT_LINKING = 'Not linking. Start below; the QR appears here and changes every 20 seconds until it is scanned.';

/**
 * The number page's "Link to WhatsApp" panel. app.js polls `data-link-state` while an attempt
 * is under way and swaps in each new QR without a reload; the page works without it too, by
 * reloading by hand.
 */
export function LinkPanel(props: { panel: LinkPanelView; csrfToken: string }): JSX.Element {
  const { panel, csrfToken } = props;
  if (!panel.links) {
    return (
      <section class="card" id="link-panel" aria-labelledby="link-heading">
        <p>Sandbox numbers are connected at once; there is nothing to link.</p>
      </section>
    );
  }
  const attempt = panel.attempt;
  const active = attempt?.active === true;
  const qrSrc = active && attempt.method === 'qr' && attempt.qr_version > 0 ? `${panel.qrUrl}?v=${attempt.qr_version}` : undefined;
  const base = `/operator/numbers/${encodeURIComponent(panel.numberId)}`;
  return (
    <section
      class="card link-panel"
      id="link-panel"
      aria-labelledby="link-heading"
      data-link-state={active ? panel.stateUrl : undefined}
      data-link-qr={panel.qrUrl}
    >
      <p id="link-status" role="status" safe>
        {attempt?.message ?? NOT_LINKING}
      </p>
      <img
        id="link-qr"
        class="link-qr"
        width="264"
        height="264"
        alt="QR code to scan with WhatsApp on the phone"
        src={qrSrc}
        hidden={qrSrc === undefined}
      />
      <p id="link-pairing-code" class="pairing-code mono" hidden={!(active && attempt.pairing_code !== null)} safe>
        {attempt?.pairing_code ?? ''}
      </p>
      <p class="muted small">
        On the phone: WhatsApp → Linked devices → Link a device. Scan the QR, or choose “Link with phone number instead” and type the
        pairing code. The phone must be the number’s own; another phone is logged out again.
      </p>
      <div class="actions">
        <PostForm action={`${base}/link`} csrfToken={csrfToken} class="inline">
          <input type="hidden" name="method" value="qr" />
          <button type="submit" class="button small">
            {active ? 'Start again with a QR code' : 'Link with a QR code'}
          </button>
        </PostForm>
        <PostForm action={`${base}/link`} csrfToken={csrfToken} class="inline">
          <input type="hidden" name="method" value="pairing_code" />
          <button type="submit" class="button small">
            {active ? 'Start again with a pairing code' : 'Link with a pairing code'}
          </button>
        </PostForm>
        {active ? <ActionButton action={`${base}/link/cancel`} csrfToken={csrfToken} label="Cancel linking" danger /> : ''}
        {panel.canRestart ? <ActionButton action={`${base}/restart`} csrfToken={csrfToken} label="Restart session" /> : ''}
      </div>
    </section>
  );
}
