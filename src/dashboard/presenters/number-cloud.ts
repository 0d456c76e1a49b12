import { cloudCallbackPath, cloudCallbackUrl } from '../../domain/cloud-settings.ts';
import type { WhatsAppNumber } from '../../domain/model.ts';
import { withinAccount, type OperatorScope } from '../../domain/tenant-scope.ts';
import type { GatewayServices } from '../../ports/gateway-services.ts';

/** What this module uses of the gateway's services (docs/adr/0061). */
type Services = Pick<GatewayServices, 'cloudNumbers' | 'config'>;

/**
 * A `cloud` number's settings as its console page shows them (docs/cloud-api.md): Meta's ids in
 * clear, and of the access token, app secret and verify token only whether they are set, since the
 * gateway keeps them sealed and never shows them again.
 */
export interface CloudPanelView {
  /** Where the form posts: under the number's account, as the operator API's path is, so a number moved meanwhile is not found. */
  action: string;
  phoneNumberId: string | null;
  businessAccountId: string | null;
  /** The token and both secrets are set and cleared together. */
  secretsSet: boolean;
  callbackPath: string;
  /** The whole URL for Meta when WAGW_PUBLIC_URL is set; null when only the path can be told. */
  callbackUrl: string | null;
}

/** What a refused form is shown again with: the ids typed, never a secret. */
export interface CloudFormValues {
  phoneNumberId: string;
  businessAccountId: string;
}

/** The number's Cloud API panel; null for a number on another engine, whose page has none. */
export async function presentCloudPanel(
  gateway: Services,
  operator: OperatorScope,
  number: WhatsAppNumber,
): Promise<CloudPanelView | null> {
  if (number.engine !== 'cloud') return null;
  const { settings } = await gateway.cloudNumbers.read(withinAccount(operator, number.accountId), number.id);
  return {
    action: cloudSettingsPath(number.accountId, number.id),
    phoneNumberId: settings?.phoneNumberId ?? null,
    businessAccountId: settings?.businessAccountId ?? null,
    secretsSet: settings !== null,
    callbackPath: cloudCallbackPath(number.id),
    callbackUrl: cloudCallbackUrl(gateway.config.publicUrl, number.id),
  };
}

/** The console's path for a number's Cloud API settings, mirroring the operator API's. */
function cloudSettingsPath(accountId: string, numberId: string): string {
  return `/operator/accounts/${encodeURIComponent(accountId)}/numbers/${encodeURIComponent(numberId)}/cloud`;
}
