import type { PageContext } from '../context.ts';
import type { BubbleView, ChatsView, ConversationView } from '../presenters/conversations.ts';
import { EmptyState, ErrorSummary, PageHeader, PostForm, Time } from './components.tsx';
import { Layout } from './layout.tsx';

/** `/conversations`: the account's chats, latest first, with their unread counts and a search. */
export function ChatsPage(props: { context: PageContext; view: ChatsView }): JSX.Element {
  const { context, view } = props;
  return (
    <Layout context={context}>
      <PageHeader title="Chats" />
      <search aria-label="Search chats">
        <form method="get" action="/conversations" class="row card">
          <div class="field grow">
            <label for="chat-search">Phone or name</label>
            <input id="chat-search" name="q" type="search" autocomplete="off" value={view.search} placeholder="+4477 or Ana" />
          </div>
          <button type="submit" class="button">
            Search
          </button>
          {view.search === '' ? '' : <a href="/conversations">Show all chats</a>}
        </form>
      </search>
      {view.chats.length === 0 ? (
        <EmptyState
          empty={
            view.search !== ''
              ? { text: 'No chat matches this search', action: { href: '/conversations', label: 'show all chats' } }
              : view.hasNumbers
                ? { text: 'No chats yet', action: { href: '/numbers', label: 'simulate an incoming message on the Numbers page' } }
                : { text: 'No chats yet: your account has no number' }
          }
        />
      ) : (
        <ul class="chat-list" aria-label="Chats">
          {view.chats.map((chat) => (
            <li>
              <a href={chat.href} class="chat-item">
                <span class="chat-item-head">
                  <span class="chat-title" safe>
                    {chat.title}
                  </span>
                  <Time at={chat.lastAt} />
                </span>
                <span class="chat-item-body">
                  <span class="chat-preview muted" safe>
                    {`${chat.previewOutbound ? 'You: ' : ''}${chat.preview}`}
                  </span>
                  {chat.unread > 0 ? (
                    <span class="unread">
                      <span class="unread-count" safe>
                        {String(chat.unread)}
                      </span>
                      <span class="visually-hidden"> unread</span>
                    </span>
                  ) : (
                    ''
                  )}
                </span>
                <span class="chat-item-meta muted small" safe>
                  {[chat.isGroup ? 'Group' : null, chat.subtitle, `on ${chat.numberPhone}`].filter((part) => part !== null).join(' · ')}
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
    </Layout>
  );
}

/** A chat's thread as it would look on a phone, with the reply box under it. */
export function ConversationPage(props: { context: PageContext; view: ConversationView }): JSX.Element {
  const { context, view } = props;
  return (
    <Layout context={context}>
      <p class="small">
        <a href="/conversations">← All chats</a>
      </p>
      <PageHeader title={view.title} />
      <p class="muted small" safe>
        {[view.isGroup ? 'Group' : null, view.subtitle, `on ${view.numberPhone}`].filter((part) => part !== null).join(' · ')}
      </p>
      <section class="conversation card" aria-label="Messages">
        <ol class="thread" data-thread-source={view.threadHref} data-thread-version={view.version} aria-live="polite">
          <Thread bubbles={view.bubbles} />
        </ol>
      </section>
      {view.canReply ? (
        <PostForm action={`${view.href}/reply`} csrfToken={context.csrfToken} class="reply-box card">
          <input type="hidden" name="reply_key" value={view.replyKey} />
          <ErrorSummary error={view.error} />
          <label for="reply-text">Reply</label>
          <div class="reply-row">
            <textarea id="reply-text" name="message" rows="2" required maxlength="4096" safe>
              {view.draft}
            </textarea>
            <button type="submit" class="button">
              Send
            </button>
          </div>
          <p class="muted small">Sent as POST /send_message sends: the number’s send policy may queue it first.</p>
        </PostForm>
      ) : (
        <p class="muted small">Members read chats; owners and admins reply.</p>
      )}
    </Layout>
  );
}

/** The thread's bubbles, oldest first; also served alone for the page's script to swap in. */
export function Thread(props: { bubbles: readonly BubbleView[] }): JSX.Element {
  if (props.bubbles.length === 0) return <li class="empty">No messages in this chat yet.</li>;
  return (
    <>
      {props.bubbles.map((bubble) => (
        <Bubble bubble={bubble} />
      ))}
    </>
  );
}

function Bubble(props: { bubble: BubbleView }): JSX.Element {
  const { bubble } = props;
  return (
    <li class={`bubble ${bubble.direction}`} data-message-id={bubble.id} data-status={bubble.status}>
      {bubble.sender === null ? (
        ''
      ) : (
        <div class="bubble-sender small" safe>
          {bubble.sender}
        </div>
      )}
      {bubble.quoted === undefined ? (
        ''
      ) : (
        <blockquote class="bubble-quote small" safe>
          {bubble.quoted === null ? 'A message not stored here' : bubble.quoted.text}
        </blockquote>
      )}
      {bubble.media === undefined ? (
        ''
      ) : bubble.media.picture ? (
        <a href={bubble.media.href} class="media-link">
          <img src={bubble.media.href} alt={`${bubble.media.kind} attachment`} class="bubble-image" loading="lazy" />
        </a>
      ) : (
        <a href={bubble.media.href} class="media-link" safe>
          {`Download the ${bubble.media.kind}`}
        </a>
      )}
      {bubble.deleted ? (
        <p class="bubble-text muted">
          <em>This message was deleted</em>
        </p>
      ) : bubble.text === '' ? (
        ''
      ) : (
        <p class="bubble-text" safe>
          {bubble.text}
        </p>
      )}
      {bubble.poll === undefined ? '' : <Poll poll={bubble.poll} />}
      {bubble.location === undefined ? (
        ''
      ) : (
        <p class="bubble-location">
          <a href={bubble.location.mapHref} rel="noopener noreferrer" target="_blank" safe>
            {`📍 ${bubble.location.name ?? `${bubble.location.latitude.toFixed(5)}, ${bubble.location.longitude.toFixed(5)}`}`}
          </a>
          {bubble.location.address === null ? (
            ''
          ) : (
            <span class="small muted" safe>
              {` ${bubble.location.address}`}
            </span>
          )}
        </p>
      )}
      {bubble.contacts === undefined
        ? ''
        : bubble.contacts.map((contact) => (
            <div class="bubble-contact">
              <strong safe>{contact.name}</strong>
              <span class="small" safe>
                {contact.phones.join(', ')}
              </span>
            </div>
          ))}
      <div class="bubble-meta small">
        {bubble.earlierTexts.length > 0 && !bubble.deleted ? (
          <span class="muted" title={`Before: ${bubble.earlierTexts.join(' → ')}`}>
            edited ·{' '}
          </span>
        ) : (
          ''
        )}
        <Time at={bubble.at} />
        {bubble.direction === 'outbound' ? (
          <span class={`bubble-status status-${bubble.status.replace(/[^a-z_]/g, '')}`} safe>
            {` · ${bubble.status}`}
          </span>
        ) : (
          ''
        )}
      </div>
      {bubble.reactions.length === 0 ? (
        ''
      ) : (
        <ul class="bubble-reactions" aria-label="Reactions">
          {bubble.reactions.map((reaction) => (
            <li class="reaction" safe>
              {reaction.count > 1 ? `${reaction.emoji} ${reaction.count}` : reaction.emoji}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

function Poll(props: { poll: NonNullable<BubbleView['poll']> }): JSX.Element {
  const { poll } = props;
  return (
    <div class="bubble-poll">
      <strong safe>{`📊 ${poll.question}`}</strong>
      <ul>
        {poll.options.map((option) => (
          <li class="poll-option">
            <span safe>{option.option}</span>
            <meter min="0" max={String(Math.max(poll.voters, 1))} value={String(option.votes)}></meter>
            <span class="small" safe>
              {`${option.votes} vote${option.votes === 1 ? '' : 's'}`}
            </span>
          </li>
        ))}
      </ul>
      <span class="small muted" safe>{`${poll.voters} voter${poll.voters === 1 ? '' : 's'}`}</span>
    </div>
  );
}
