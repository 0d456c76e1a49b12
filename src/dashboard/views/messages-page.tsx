import type { PageContext } from '../context.ts';
import type { MessagesView } from '../presenters/messages.ts';
import { ErrorSummary, PageHeader, type Empty } from './components.tsx';
import { Layout } from './layout.tsx';
import { MessagesTable } from './shared-tables.tsx';

export function MessagesPage(props: { context: PageContext; view: MessagesView }): JSX.Element {
  const { context, view } = props;
  const empty: Empty = view.filtering
    ? { text: 'No messages match these filters', action: { href: '/messages', label: 'show all messages' } }
    : { text: 'No messages yet', action: { href: '/numbers', label: 'simulate an incoming one on the Numbers page' } };
  return (
    <Layout context={context}>
      <PageHeader title="Messages" />
      <FilterForm view={view} />
      <ErrorSummary error={view.error} />
      {view.error === undefined ? <MessagesTable messages={view.messages} empty={empty} /> : ''}
      {view.olderHref === undefined && view.newestHref === undefined ? (
        ''
      ) : (
        <nav class="pager" aria-label="Pages">
          {view.newestHref === undefined ? <span></span> : <a href={view.newestHref}>← Newest</a>}
          {view.olderHref === undefined ? <span></span> : <a href={view.olderHref}>Older messages →</a>}
        </nav>
      )}
    </Layout>
  );
}

// A GET form: filtering changes nothing, so it needs no CSRF token and its URL can be shared.
function FilterForm(props: { view: MessagesView }): JSX.Element {
  const { filters, numbers } = props.view;
  return (
    <search aria-label="Filter messages">
      <form method="get" action="/messages" class="row card">
        <div class="field">
          <label for="filter-number">Number</label>
          <select id="filter-number" name="number_id">
            <option value="">Any number</option>
            {numbers.map((number) => (
              <option value={number.id} selected={number.id === filters.numberId} safe>
                {number.phone}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="filter-direction">Direction</label>
          <select id="filter-direction" name="direction">
            <option value="" selected={filters.direction === '' || filters.direction === 'any'}>
              Any
            </option>
            <option value="outbound" selected={filters.direction === 'outbound'}>
              Sent
            </option>
            <option value="inbound" selected={filters.direction === 'inbound'}>
              Received
            </option>
          </select>
        </div>
        <div class="field">
          <label for="filter-phone">Phone</label>
          <input id="filter-phone" name="phone" type="tel" autocomplete="off" value={filters.phone} placeholder="+447700900123" />
        </div>
        <button type="submit" class="button">
          Filter
        </button>
        {props.view.filtering ? <a href="/messages">Clear filters</a> : ''}
      </form>
    </search>
  );
}
