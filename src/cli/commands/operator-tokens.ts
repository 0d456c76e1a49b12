import type { Command } from 'commander';
import { CLI_ACTOR } from '../../domain/audit.ts';
import type { OperatorToken } from '../../domain/operator-token.ts';
import { withGateway } from '../context.ts';
import { iso, table } from '../output.ts';

function tokenJson(token: OperatorToken) {
  return {
    id: token.id,
    name: token.name,
    hint: token.hint,
    created_at: iso(token.createdAt),
    revoked_at: iso(token.revokedAt),
    last_used_at: iso(token.lastUsedAt),
  };
}

/** Operator tokens, the operator API's credentials (docs/operator-api.md). */
export function registerOperatorTokenCommands(program: Command): void {
  const tokens = program.command('operator-token').description("Manage operator tokens, the operator API's credentials");

  tokens
    .command('create')
    .description('Create an operator token; it is printed this once and never again')
    .requiredOption('--name <name>', 'a name to tell tokens apart (who or what uses it)')
    .action(async (options: { name: string }, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        const { token, plaintext } = await gateway.operatorTokens.create(options.name, CLI_ACTOR);
        output.print(
          { ...tokenJson(token), token: plaintext },
          `Created operator token ${token.id} "${token.name}".\nToken (shown once, store it now): ${plaintext}`,
        );
      });
    });

  tokens
    .command('list')
    .description('List operator tokens (never the tokens themselves)')
    .action(async (_options: object, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        const listed = (await gateway.operatorTokens.list()).map(tokenJson);
        output.print({ tokens: listed }, table(listed, ['id', 'name', 'hint', 'created_at', 'revoked_at', 'last_used_at']));
      });
    });

  tokens
    .command('revoke <id>')
    .description('Revoke an operator token; every node refuses it from the next request')
    .action(async (id: string, _options: object, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        const revoked = await gateway.operatorTokens.revoke(id, CLI_ACTOR);
        output.print(tokenJson(revoked), `Revoked operator token ${revoked.id}.`);
      });
    });
}
