import type { E164 } from '../../domain/phone.ts';
import type { SandboxNetworkPort } from './sandbox-network.ts';

// Which recipients of a sandbox send are the gateway's own sandbox numbers, so that the network
// holds what is sent to them until they connect, rather than handing it to an outside handset.

/** How stale the list of the gateway's sandbox phones may be when a send meets a phone not in it. */
const SANDBOX_PHONES_FRESH_MS = 1_000;

export interface SandboxPhoneBookOptions {
  network: Pick<SandboxNetworkPort, 'expect'>;
  /** The phones of every sandbox number of the gateway, connected or not. */
  listSandboxPhones(): Promise<string[]>;
}

export class SandboxPhoneBook {
  /** Sandbox phones the network has been told of; see `announce`. */
  private readonly announced = new Set<string>();
  private sandboxPhones: { phones: Set<string>; readAt: number } | undefined;
  private sandboxPhonesRead: Promise<Set<string>> | undefined;

  constructor(private readonly options: SandboxPhoneBookOptions) {}

  /**
   * Tells the network that a recipient is a sandbox number of the gateway, before its session
   * first connects: a number just added (by the CLI, say) connects on the serving node's next
   * lease tick, and a message sent to it meanwhile must wait for it, not go to an outside handset.
   * The gateway's sandbox phones are read again at most once a second, when a send meets a phone
   * not among them, so that sends to outside phones do not each cost a query.
   */
  async announce(phone: E164): Promise<void> {
    if (this.announced.has(phone)) return;
    if (!(await this.sandboxPhonesFor(phone)).has(phone)) return;
    await this.options.network.expect(phone);
    this.announced.add(phone);
  }

  /**
   * The gateway's sandbox phones, read again when `phone` is not among them and the last read is
   * a second old. One read at a time: the sends that meet an outside phone while it runs share
   * it. Each used to read for itself, and the queue runner's releases, which start together,
   * read the whole list dozens of times a second (most of a release's CPU in bench:governor).
   */
  private async sandboxPhonesFor(phone: E164): Promise<Set<string>> {
    const known = this.sandboxPhones;
    if (known !== undefined && (known.phones.has(phone) || Date.now() - known.readAt < SANDBOX_PHONES_FRESH_MS)) return known.phones;
    this.sandboxPhonesRead ??= this.readSandboxPhones().finally(() => {
      this.sandboxPhonesRead = undefined;
    });
    return this.sandboxPhonesRead;
  }

  private async readSandboxPhones(): Promise<Set<string>> {
    const readAt = Date.now();
    const phones = new Set(await this.options.listSandboxPhones());
    this.sandboxPhones = { phones, readAt };
    return phones;
  }
}
