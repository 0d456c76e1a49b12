import { recordNumberAudit } from '../audit/audit-trail.ts';
import { SYSTEM_ACTOR, type AuditActor } from '../domain/audit.ts';
import { parseCloudSettings, type CloudSettings } from '../domain/cloud-settings.ts';
import { AppError } from '../domain/errors.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { TenantScope } from '../domain/tenant-scope.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { Store } from '../store/database.ts';
import { deleteCloudSettings, findCloudSettings, saveCloudSettings } from '../store/repositories/cloud-numbers.ts';
import type { NumbersService } from './numbers-service.ts';

/** What the operator sees of a cloud number's settings: Meta's ids; the token and secrets never leave the gateway. */
export interface CloudSettingsView {
  phoneNumberId: string;
  businessAccountId: string;
}

/**
 * A Cloud API number's settings (docs/cloud-api.md), as the operator API, the CLI and the console
 * set them: checked, the token and secrets sealed at rest, each change an audit row that names
 * only Meta's ids. Only a number on the `cloud` engine takes them.
 */
export class CloudNumbersService {
  constructor(
    private readonly store: Store,
    private readonly numbers: NumbersService,
    private readonly secretBox: SecretBox,
  ) {}

  async set(
    scope: TenantScope,
    phoneOrId: string,
    input: Record<keyof CloudSettings, string>,
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<{ number: WhatsAppNumber; settings: CloudSettingsView }> {
    const number = await this.cloudNumber(scope, phoneOrId);
    const settings = parseCloudSettings(input);
    const { phoneNumberId, businessAccountId } = settings;
    await this.store.db.transaction().execute(async (trx) => {
      await saveCloudSettings(
        trx,
        number.id,
        {
          phone_number_id: phoneNumberId,
          business_account_id: businessAccountId,
          access_token_ciphertext: this.secretBox.seal(settings.accessToken),
          app_secret_ciphertext: this.secretBox.seal(settings.appSecret),
          verify_token_ciphertext: this.secretBox.seal(settings.verifyToken),
        },
        new Date(),
      );
      await recordNumberAudit(trx, actor, 'number.cloud_settings_set', number, {
        phone_number_id: phoneNumberId,
        business_account_id: businessAccountId,
      });
    });
    return { number, settings: { phoneNumberId, businessAccountId } };
  }

  async read(scope: TenantScope, phoneOrId: string): Promise<{ number: WhatsAppNumber; settings: CloudSettingsView | null }> {
    const number = await this.cloudNumber(scope, phoneOrId);
    const row = await findCloudSettings(this.store.db, number.id);
    return {
      number,
      settings: row === undefined ? null : { phoneNumberId: row.phone_number_id, businessAccountId: row.business_account_id },
    };
  }

  async clear(scope: TenantScope, phoneOrId: string, actor: AuditActor = SYSTEM_ACTOR): Promise<WhatsAppNumber> {
    const number = await this.cloudNumber(scope, phoneOrId);
    await this.store.db.transaction().execute(async (trx) => {
      if (await deleteCloudSettings(trx, number.id)) await recordNumberAudit(trx, actor, 'number.cloud_settings_cleared', number);
    });
    return number;
  }

  private async cloudNumber(scope: TenantScope, phoneOrId: string): Promise<WhatsAppNumber> {
    const number = await this.numbers.findNumber(scope, phoneOrId);
    if (number.engine !== 'cloud')
      throw new AppError(
        'invalid_argument',
        `${number.phone} runs on the ${number.engine} engine; only a cloud number has Cloud API settings.`,
        {
          field: 'engine',
        },
      );
    return number;
  }
}
