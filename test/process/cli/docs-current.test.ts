import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../../support/run-cli.ts';

/**
 * The docs keep up with the code (issue 39, item 9): the README's CLI list names every command
 * the CLI has, `number pause` says what a governed number does, and no doc repeats a passage
 * inside one paragraph, as webhooks.md once did when an edit left its older wording interleaved.
 */

const README = fs.readFileSync('README.md', 'utf8');

/** The commands a `--help` lists, without commander's own `help`. */
function commandsOf(help: string): { name: string; description: string }[] {
  const section = help.split(/^Commands:\n/m)[1] ?? '';
  const commands: { name: string; description: string }[] = [];
  for (const line of section.split('\n')) {
    const started = /^ {2}([a-z][a-z-]*)\b[^ ]*(?: [^ ]+)*? {2,}(.*)$/.exec(line);
    if (started !== null) commands.push({ name: started[1]!, description: started[2]! });
    else if (/^ {3,}\S/.test(line) && commands.length > 0) commands.at(-1)!.description += ` ${line.trim()}`;
  }
  return commands.filter((command) => command.name !== 'help');
}

/** Runs `wagw … --help`; help needs no database, so none is given. */
async function help(...args: string[]): Promise<string> {
  const run = await runCli('sqlite://unused-by-help.db', [...args, '--help']);
  assert.equal(run.exitCode, 0, `wagw ${args.join(' ')} --help: ${run.stderr}`);
  return run.stdout;
}

/** The first run of `words` words that comes back later in the same paragraph, if any. */
function repeatedPassage(text: string, words = 10): string | undefined {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/^\|.*$/gm, '');
  for (const paragraph of prose.split(/\n\s*\n/)) {
    const tokens = paragraph.split(/\s+/).filter((token) => token !== '');
    const seen = new Set<string>();
    for (let index = 0; index + words <= tokens.length; index++) {
      const passage = tokens.slice(index, index + words).join(' ');
      if (seen.has(passage)) return passage;
      seen.add(passage);
    }
  }
  return undefined;
}

describe('the README and the docs keep up with the code', () => {
  it("the README's CLI list names every command and subcommand the CLI has", async () => {
    const top = commandsOf(await help());
    assert.ok(
      top.some((command) => command.name === 'number'),
      'the top-level help lists the groups',
    );
    const listed = new Set(
      README.split('\n')
        .filter((line) => line.startsWith('wagw '))
        .flatMap((line) => {
          const [, first, second] = line.split(/\s+/);
          return [first!, `${first} ${second}`];
        }),
    );
    const groups = await Promise.all(top.map(async (command) => ({ command, subcommands: commandsOf(await help(command.name)) })));
    const missing = groups.flatMap(({ command, subcommands }) =>
      subcommands.length === 0
        ? listed.has(command.name)
          ? []
          : [command.name]
        : subcommands.map((sub) => `${command.name} ${sub.name}`).filter((name) => !listed.has(name)),
    );
    assert.deepEqual(missing, [], 'commands the README does not list');
    const pause = groups.find(({ command }) => command.name === 'number')?.subcommands.find((sub) => sub.name === 'pause');
    assert.match(pause?.description ?? '', /queued/, '`number pause --help` says a governed number queues its sends');
  });

  it('no doc repeats a passage of ten words inside one paragraph (an edit that left its older wording behind)', () => {
    const docs = ['README.md', ...fs.readdirSync('docs').map((name) => path.join('docs', name))].filter((file) => file.endsWith('.md'));
    const repeated = docs.flatMap((file) => {
      const passage = repeatedPassage(fs.readFileSync(file, 'utf8'));
      return passage === undefined ? [] : [`${file}: "${passage}"`];
    });
    assert.deepEqual(repeated, []);
    // What webhooks.md said before issue 39 is caught.
    const interleaved =
      'receives: `message`. Every one of those payloads has `group`, `null` for a direct chat and\n' +
      '`{id, subject}` for a group, so a receiver can tell them apart. `group.updated`,\n' +
      "`session.status`, `number.paused` and `number.resumed` go to their subscribers whatever the scope. Set it in the dashboard's webhook\n" +
      '`{id, subject}` for a group, so a receiver can tell them apart. `group.updated`, `poll.vote` and\n' +
      "`session.status` go to their subscribers whatever the scope. Set it in the dashboard's webhook\n";
    assert.ok(repeatedPassage(interleaved) !== undefined, 'the check finds the interleaved paragraph');
  });
});
