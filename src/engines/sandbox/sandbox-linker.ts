import { randomBytes, randomInt } from 'node:crypto';
import type { SessionLease, SessionStatus, WhatsAppNumber } from '../../domain/model.ts';
import type { LinkSession, LinkUpdate } from '../engine.ts';

/** How often WhatsApp offers a new QR while nobody scans (Baileys sees about 20 s). */
const QR_ROTATE_MS = 20_000;
/** How many QRs WhatsApp offers before it gives the attempt up (link_expired). */
const QRS_BEFORE_EXPIRY = 6;
/** WhatsApp's pairing codes: 8 characters of letters and digits, without look-alikes. */
const PAIRING_ALPHABET = 'ABCDEFGHJKLMNPQRSTVWXYZ23456789';
/** The reason of the disconnected status an attempt that ended without a scan leaves. */
export const LINK_ENDED_REASON = 'linking ended before the phone scanned';

export interface SandboxLinkerOptions {
  /** Connects the number's session to the network once its phone has scanned or typed the code. */
  connect(number: WhatsAppNumber, lease: SessionLease): Promise<void>;
  /** Ends the number's session on the network (linking starts from a session that is not connected). */
  disconnect(number: WhatsAppNumber): Promise<void>;
  /** Records the session's status as every node sees it, as a real session reports its own. */
  report(number: WhatsAppNumber, lease: SessionLease, status: SessionStatus, reason: string): Promise<void>;
  qrRotateMs?: number;
  qrsBeforeExpiry?: number;
}

/**
 * Linking as WhatsApp does it, for sandbox numbers, so that an operator rehearses it end to end
 * (docs/adr/0064-number-session-operator-api.md): the session leaves the network, a QR is
 * offered and replaced every 20 s, a pairing code can be asked for, and the attempt expires after
 * six QRs. The simulated phone "scans" by showing the current QR or pairing code back
 * (`confirm`, POST /sandbox/link_scan); only then does the number connect again.
 */
export class SandboxLinker {
  private readonly attempts = new Map<string, SandboxLinkAttempt>();

  constructor(private readonly options: SandboxLinkerOptions) {}

  async link(number: WhatsAppNumber, lease: SessionLease): Promise<LinkSession> {
    this.attempts.get(number.id)?.end();
    await this.options.disconnect(number);
    const attempt = new SandboxLinkAttempt(number, lease, this.options, () => this.attempts.delete(number.id));
    this.attempts.set(number.id, attempt);
    await this.options.report(number, lease, 'connecting', 'linking: waiting for the phone to scan the QR or type the code');
    attempt.begin();
    return attempt;
  }

  /** Whether a linking attempt holds the number off the network now. */
  linking(numberId: string): boolean {
    return this.attempts.has(numberId);
  }

  /** The simulated phone shows back a QR or a pairing code: true when it is the attempt's current one, and the number is linked. */
  async confirm(number: WhatsAppNumber, code: string): Promise<boolean> {
    const attempt = this.attempts.get(number.id);
    return attempt !== undefined && (await attempt.confirm(code));
  }

  /** Ends the attempt of a number logged out. */
  forget(numberId: string): void {
    this.attempts.get(numberId)?.end();
  }
}

class SandboxLinkAttempt implements LinkSession {
  private readonly listeners = new Set<(update: LinkUpdate) => void>();
  private qr: string | null = null;
  private pairingCode: string | null = null;
  private qrsOffered = 0;
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly number: WhatsAppNumber,
    private readonly lease: SessionLease,
    private readonly options: SandboxLinkerOptions,
    private readonly onEnd: () => void,
  ) {}

  /**
   * Offers the first QR once the caller has subscribed, as a socket's first QR comes after it is
   * opened: the caller subscribes as soon as link() resolves, and a timer fires only after that.
   */
  begin(): void {
    this.timer = setTimeout(() => this.offerQr(), 0);
  }

  onUpdate(listener: (update: LinkUpdate) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async requestPairingCode(): Promise<string> {
    if (this.ended) throw new Error('the linking attempt has ended');
    this.pairingCode = Array.from({ length: 8 }, () => PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)]).join('');
    this.emit({ pairingCode: this.pairingCode, status: 'connecting' });
    return this.pairingCode;
  }

  async confirm(code: string): Promise<boolean> {
    const typed = code.trim().toUpperCase().replace(/-/g, '');
    const matches = (this.qr !== null && code === this.qr) || (this.pairingCode !== null && typed === this.pairingCode);
    if (this.ended || !matches) return false;
    this.end();
    await this.options.connect(this.number, this.lease);
    this.emit({ status: 'connected', reason: null }, true);
    return true;
  }

  /** Ends the attempt; one that had not linked leaves the number disconnected, as a socket closed mid-link does. */
  async stop(): Promise<void> {
    if (this.ended) return;
    this.end();
    await this.options.report(this.number, this.lease, 'disconnected', LINK_ENDED_REASON);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.onEnd();
  }

  private offerQr(): void {
    if (this.ended) return;
    const qrsBeforeExpiry = this.options.qrsBeforeExpiry ?? QRS_BEFORE_EXPIRY;
    if (this.qrsOffered >= qrsBeforeExpiry) {
      this.end();
      const reason = `no phone scanned any of ${qrsBeforeExpiry} QR codes`;
      this.emit({ status: 'link_expired', reason }, true);
      // A write refused (the number moved on) leaves the status to the node that serves it now.
      void this.options.report(this.number, this.lease, 'link_expired', reason).catch(() => undefined);
      return;
    }
    this.qrsOffered += 1;
    // Shaped like WhatsApp's (ref,public key,identity key,adv secret), and as unguessable.
    this.qr = `2@${randomBytes(24).toString('base64')},sandbox,${this.number.phone},${randomBytes(8).toString('hex')}`;
    this.emit({ qr: this.qr, status: 'connecting' });
    this.timer = setTimeout(() => this.offerQr(), this.options.qrRotateMs ?? QR_ROTATE_MS);
  }

  private emit(update: LinkUpdate, final = false): void {
    if (this.ended && !final) return;
    for (const listener of this.listeners) listener(update);
  }
}
