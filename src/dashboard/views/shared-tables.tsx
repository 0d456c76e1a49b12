import type { MessageRowView, NumberRowView } from '../presenters/shared.ts';
import { EmptyState, NumberStatus, StatusBadge, Time, type Empty } from './components.tsx';

export function MessagesTable(props: { messages: MessageRowView[]; empty: Empty }): JSX.Element {
  if (props.messages.length === 0) return <EmptyState empty={props.empty} />;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Direction</th>
            <th scope="col">Number</th>
            <th scope="col">With</th>
            <th scope="col">Message</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {props.messages.map((message) => (
            <tr>
              <td>
                <Time at={message.at} />
              </td>
              <td>{message.direction === 'outbound' ? 'Sent' : 'Received'}</td>
              <td class="mono" safe>
                {message.ownPhone}
              </td>
              <td>
                <span class="mono" safe>
                  {message.counterpart}
                </span>
                {message.group === undefined ? '' : <span class="muted" safe>{` in ${message.group}`}</span>}
              </td>
              <td class="text">
                {message.media === undefined ? (
                  ''
                ) : message.media.picture ? (
                  <a href={message.media.href} class="media-link">
                    <img src={message.media.href} alt={`${message.media.kind} attachment`} class="thumbnail" loading="lazy" />
                  </a>
                ) : (
                  <a href={message.media.href} class="media-link" safe>
                    {`Download the ${message.media.kind}`}
                  </a>
                )}
                <span safe>{message.text}</span>
                {message.change === undefined ? (
                  ''
                ) : (
                  <span class="muted">{message.change === 'deleted' ? ' (deleted for everyone)' : ' (edited)'}</span>
                )}
              </td>
              <td>
                <StatusBadge status={message.status} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function NumbersTable(props: { numbers: NumberRowView[]; empty: Empty }): JSX.Element {
  if (props.numbers.length === 0) return <EmptyState empty={props.empty} />;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Number</th>
            <th scope="col">Holder</th>
            <th scope="col">Engine</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {props.numbers.map((number) => (
            <tr>
              <td class="mono" safe>
                {number.phone}
              </td>
              <td safe>{number.holder ?? '—'}</td>
              <td safe>{number.engine}</td>
              <td>
                <NumberStatus id={number.id} status={number.status} reason={number.statusReason} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
