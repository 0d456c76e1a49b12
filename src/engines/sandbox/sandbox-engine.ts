import { randomFraction } from '../../domain/ids.ts';
import type { Message, SessionStatus, WhatsAppNumber } from '../../domain/model.ts';
import type { E164 } from '../../domain/phone.ts';
import { monotonicFactory } from 'ulid';
import type { Engine, EngineEvents, InboundSimulator, OutgoingText, SentText } from '../engine.ts';
import { EngineSendError } from '../engine.ts';

export interface SandboxEngineOptions {
  events: EngineEvents;
  /** Finds a sandbox number anywhere in the gateway, which is what makes the network shared. */
  findSandboxNumber(phone: E164): Promise<WhatsAppNumber | undefined>;
}

const nextUlid = monotonicFactory(randomFraction);

/**
 * The simulated WhatsApp network, and the embedded default engine.
 *
 * Every sandbox number in the gateway is a device on one shared network: a send to another
 * sandbox number, of any account, arrives there as an incoming message, and every send is
 * acknowledged with a `delivered` receipt. It keeps no session
 * state of its own; a number's
 * stored status is its status, so an operator can rehearse an outage by setting it.
 */
export class SandboxEngine implements Engine, InboundSimulator {
  readonly kind = 'sandbox' as const;
  readonly capabilities = { simulatedInbound: true, simulatedSessionStatus: true, linking: false };
  readonly initialStatus: SessionStatus = 'connected';
  readonly simulator: InboundSimulator = this;

  constructor(private readonly options: SandboxEngineOptions) {}

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  sessionStatus(number: WhatsAppNumber): SessionStatus {
    return number.status;
  }

  async sendText(number: WhatsAppNumber, request: OutgoingText): Promise<SentText> {
    if (number.status !== 'connected') {
      throw new EngineSendError('not_connected', `The sandbox session of ${number.phone} is ${number.status}.`, number.status);
    }
    const engineMessageId = newSandboxMessageId();
    const recipient = await this.options.findSandboxNumber(request.toPhone);
    if (recipient !== undefined) {
      // The sender's send completes only once the recipient has it stored, as a device
      // acknowledges a message on the real network.
      await this.options.events.incomingMessage({
        toPhone: recipient.phone,
        fromPhone: number.phone,
        fromLid: null,
        text: request.text,
        contentKind: 'text',
        engineMessageId: newSandboxMessageId(),
        receivedAt: new Date(),
      });
    }
    // The simulated network acknowledges every send, as a handset's delivery receipt would.
    setImmediate(() => {
      void this.options.events.receipt({ phone: number.phone, engineMessageId, status: 'delivered', errorCode: null, at: new Date() }).catch(() => {});
    });
    return { engineMessageId };
  }

  deliverIncoming(number: WhatsAppNumber, fromPhone: E164, text: string): Promise<Message> {
    return this.options.events.incomingMessage({
      toPhone: number.phone,
      fromPhone,
      fromLid: null,
      text,
      contentKind: 'text',
      engineMessageId: newSandboxMessageId(),
      receivedAt: new Date(),
    });
  }
}

function newSandboxMessageId(): string {
  return `sbx_${nextUlid()}`;
}
