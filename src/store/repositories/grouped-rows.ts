// A batched read answers for several messages in one query; its callers want each message's rows.

/** Rows of several messages, each message's in the rows' order, keyed by its id. */
export function groupedByMessage<Row extends { message_id: string }, Item>(
  rows: readonly Row[],
  toItem: (row: Row) => Item,
): Map<string, Item[]> {
  const grouped = new Map<string, Item[]>();
  for (const row of rows) {
    const items = grouped.get(row.message_id);
    if (items === undefined) grouped.set(row.message_id, [toItem(row)]);
    else items.push(toItem(row));
  }
  return grouped;
}
