import type { Command } from 'commander';
import { CLI_ACTOR } from '../../domain/audit.ts';
import { accountJson, table, userJson } from '../output.ts';
import { parseWholeNumber, withGateway } from '../context.ts';
import { withinAccount } from '../../domain/tenant-scope.ts';

export function registerAccountCommands(program: Command): void {
  const account = program.command('account').description('Manage accounts');

  account
    .command('create')
    .description('Create an account')
    .requiredOption('--name <name>', 'the account name')
    .option('--plan <plan>', 'starter, pro or enterprise', 'starter')
    .option('--monthly-limit <n>', "a custom monthly message limit, replacing the plan's")
    .action(async (options: { name: string; plan: string; monthlyLimit?: string }, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        const created = await gateway.accounts.createAccount(
          {
            name: options.name,
            plan: options.plan,
            customMonthlyLimit: options.monthlyLimit === undefined ? null : parseWholeNumber(options.monthlyLimit, '--monthly-limit'),
          },
          CLI_ACTOR,
        );
        output.print(accountJson(created), `Created account ${created.id} "${created.name}" on the ${created.plan} plan.`);
      });
    });

  account
    .command('list')
    .description('List accounts')
    .action(async (_options: object, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        const accounts = (await gateway.accounts.listAccounts()).map(accountJson);
        output.print({ accounts }, table(accounts, ['id', 'name', 'plan', 'effective_monthly_limit', 'created_at']));
      });
    });

  account
    .command('update <id>')
    .description("Change an account's plan or custom monthly limit")
    .option('--plan <plan>', 'starter, pro or enterprise')
    .option('--monthly-limit <n>', 'a custom monthly limit, or "none" to use the plan\'s')
    .action(async (id: string, options: { plan?: string; monthlyLimit?: string }, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        const limit = options.monthlyLimit;
        const updated = await gateway.accounts.updateAccount(
          id,
          {
            ...(options.plan !== undefined && { plan: options.plan }),
            ...(limit !== undefined && { customMonthlyLimit: limit === 'none' ? null : parseWholeNumber(limit, '--monthly-limit') }),
          },
          CLI_ACTOR,
        );
        output.print(
          accountJson(updated),
          `Updated account ${updated.id}: plan ${updated.plan}, custom limit ${updated.customMonthlyLimit ?? 'none'}.`,
        );
      });
    });
}

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description('Manage users');

  user
    .command('create')
    .description('Create a user in an account, or an operator')
    .requiredOption('--email <email>', 'the sign-in email')
    .option('--account <id>', 'the account the user belongs to')
    .option('--role <role>', 'owner, admin or member')
    .option('--operator', 'make the user an operator of this gateway')
    .option('--password <password>', 'the password; one is generated and shown once if omitted')
    .action(
      async (options: { email: string; account?: string; role?: string; operator?: boolean; password?: string }, command: Command) => {
        await withGateway(command, async (gateway, output) => {
          const created = await gateway.accounts.createUser(
            {
              email: options.email,
              accountId: options.account ?? null,
              ...(options.role !== undefined && { role: options.role }),
              isOperator: options.operator ?? false,
              ...(options.password !== undefined && { password: options.password }),
            },
            CLI_ACTOR,
          );
          const json = {
            ...userJson(created.user),
            ...(created.generatedPassword !== undefined && { password: created.generatedPassword }),
          };
          const passwordLine = created.generatedPassword === undefined ? '' : `\nPassword (shown once): ${created.generatedPassword}`;
          output.print(json, `Created user ${created.user.id} <${created.user.email}>.${passwordLine}`);
        });
      },
    );

  user
    .command('list')
    .description('List users')
    .option('--account <id>', 'only the users of this account')
    .action(async (options: { account?: string }, command: Command) => {
      await withGateway(command, async (gateway, output, operator) => {
        if (options.account !== undefined) await gateway.accounts.getAccount(options.account);
        const users = (
          await gateway.accounts.listUsers(options.account === undefined ? operator : withinAccount(operator, options.account))
        ).map(userJson);
        output.print({ users }, table(users, ['id', 'email', 'account_id', 'role', 'is_operator']));
      });
    });
}
