export { accountJson, numberJson, userJson } from '../accounts/account-json.ts';

/** How a command's result is shown: one JSON object with --json, readable lines without. */
export interface Output {
  json: boolean;
  print(result: object, humanText: string): void;
}

export function createOutput(json: boolean): Output {
  return {
    json,
    print(result, humanText) {
      process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${humanText}\n`);
    },
  };
}

export const iso = (date: Date | null) => (date === null ? null : date.toISOString());

/** Renders rows as aligned columns for a terminal. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map((column) => String(row[column] ?? '-')));
  const widths = columns.map((column, index) => Math.max(column.length, ...cells.map((cell) => cell[index]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index]!))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}
