import type { NumberHealthView } from '../presenters/number-health.ts';
import { NumberStatus, PostForm, Time } from './components.tsx';

/**
 * A card per number (issue 47): its connection and since when, its pause, its queue and next
 * send, its last message in and out, its engine, its proxy for operators, and the owner's
 * actions. Resume and Clear queue post to routes that run them through NumberControl on the
 * number's owner node.
 */
export function NumberHealthCards(props: { cards: readonly NumberHealthView[]; csrfToken: string }): JSX.Element {
  return (
    <div class="grid health-cards">
      {props.cards.map((card) => (
        <section class="card health-card" aria-label={`Number ${card.phone}`} data-health-status={card.status}>
          <h3 class="mono" safe>
            {card.phone}
          </h3>
          <div>
            <NumberStatus id={card.id} status={card.status} reason={card.statusReason} />
          </div>
          <dl class="facts small">
            <dt>Status since</dt>
            <dd data-status-since={card.id}>
              <Time at={card.statusSince} />
            </dd>
            <dt>Engine</dt>
            <dd safe>{card.engine}</dd>
            {card.proxy === undefined ? (
              ''
            ) : (
              <>
                <dt>Proxy</dt>
                <dd class="mono" safe>
                  {card.proxy ?? 'none (direct)'}
                </dd>
              </>
            )}
            <dt>Waiting</dt>
            <dd safe>{card.waiting === 0 ? 'nothing' : `${card.waiting} message${card.waiting === 1 ? '' : 's'}`}</dd>
            <dt>Next send</dt>
            <dd>
              <Time at={card.nextSendAt} empty={card.waiting > 0 ? 'when resumed' : '—'} />
            </dd>
            <dt>Last in</dt>
            <dd>
              <Time at={card.lastIn} />
            </dd>
            <dt>Last out</dt>
            <dd>
              <Time at={card.lastOut} />
            </dd>
          </dl>
          {card.pause === null ? (
            ''
          ) : (
            <div class="health-pause">
              <p>
                <span class="badge status-paused">paused</span> <span safe>{card.pause.reason}</span>
              </p>
              {card.pause.detail === null ? (
                ''
              ) : (
                <p class="muted" safe>
                  {card.pause.detail}
                </p>
              )}
              <p class="small">
                Since <Time at={card.pause.since} />;{' '}
                {card.pause.until === null ? (
                  'until it is resumed'
                ) : (
                  <>
                    resumes by itself at <Time at={card.pause.until} />
                  </>
                )}
              </p>
            </div>
          )}
          {card.canResume || card.canClearQueue ? (
            <div class="actions">
              {card.canResume ? (
                <PostForm action={`${card.actionBase}/resume`} csrfToken={props.csrfToken} class="inline">
                  <button type="submit" class="button">
                    Resume
                  </button>
                </PostForm>
              ) : (
                ''
              )}
              {card.canClearQueue ? (
                <PostForm
                  action={`${card.actionBase}/clear_queue`}
                  csrfToken={props.csrfToken}
                  class="inline"
                  confirm={`Cancel all ${card.waiting} waiting message(s) of ${card.phone}? None of them will be sent.`}
                >
                  <button type="submit" class="button danger">
                    Clear queue
                  </button>
                </PostForm>
              ) : (
                ''
              )}
            </div>
          ) : (
            ''
          )}
        </section>
      ))}
    </div>
  );
}
