import type { WACallEvent, WACallUpdateType } from 'baileys';
import { isJidGroup } from 'baileys';
import type { CallStatus } from '../../domain/calls.ts';
import type { IncomingCallEvent } from '../engine-events.ts';
import { memberOf } from './group-mapper.ts';

/**
 * Baileys' call updates the gateway reports, by what they mean. The others (ringing on another
 * device, transport, relay latency, pre-accept) are the call's plumbing, not news of it.
 */
const REPORTED: Partial<Record<WACallUpdateType, CallStatus>> = {
  offer: 'offered',
  timeout: 'missed',
  accept: 'accepted',
  reject: 'rejected',
  terminate: 'ended',
};

/** A call as the engine port tells it, without our number; undefined for an update not reported or a caller unnamed. */
export function mapCallEvent(call: WACallEvent): Omit<IncomingCallEvent, 'toPhone'> | undefined {
  const status = REPORTED[call.status];
  const caller = memberOf(call.from, call.callerPn);
  if (status === undefined || caller === null || !call.id) return undefined;
  const groupId = call.groupJid ?? (isJidGroup(call.chatId) ? call.chatId : undefined);
  return {
    call: { callId: call.id, caller: call.from },
    fromPhone: caller.phone,
    fromLid: caller.lid,
    groupId: groupId ?? null,
    video: call.isVideo === true,
    status,
    at: call.date instanceof Date && !Number.isNaN(call.date.getTime()) ? call.date : new Date(),
  };
}
