import type { Command } from 'commander';
import { readClusterStatus, readNodeTasks } from '../../observability/cluster-status.ts';
import { serveSandboxNetwork } from '../../engines/sandbox/sandbox-network-server.ts';
import { loadConfig } from '../../config.ts';
import { createLogger } from '../../main.ts';
import { loadSecretKey } from '../../secrets/secret-box.ts';
import { deriveSandboxNetworkKey } from '../../engines/sandbox/sandbox-network-handshake.ts';
import { parseWholeNumber, withGateway } from '../context.ts';
import { table } from '../output.ts';

export function registerClusterCommands(program: Command): void {
  const cluster = program.command('cluster').description('The nodes that share this database');
  cluster
    .command('status')
    .description('Nodes, their heartbeat age, the numbers each owns, their periodic tasks, and recent changes of owner')
    .action(async (_options: object, command: Command) => {
      await withGateway(command, async (gateway, output) => {
        const status = await readClusterStatus(gateway.store, gateway.config.cluster.leaseTtlMs);
        const tasksByNode = await readNodeTasks(status.nodes, {
          thisNodeId: gateway.keeper.nodeId,
          scheduler: gateway.scheduler,
          nodeClient: gateway.nodeClient,
        });
        const nodes = status.nodes.map((node) => ({
          id: node.id,
          name: node.name,
          state: node.state,
          url: node.url,
          heartbeat_age_ms: node.heartbeatAgeMs,
          started_at: node.startedAt.toISOString(),
          numbers: node.phones.length,
          phones: node.phones,
          // null when the node is not live or did not answer.
          tasks:
            tasksByNode.get(node.id)?.map((task) => ({
              name: task.name,
              scope: task.scope,
              interval_ms: task.intervalMs,
              active: task.active,
              runs: task.runs,
              failures: task.failures,
              last_run_at: task.lastRunAt,
              last_duration_ms: task.lastDurationMs === null ? null : Math.round(task.lastDurationMs),
            })) ?? null,
        }));
        const taskRows = nodes.flatMap((node) => (node.tasks ?? []).map((task) => ({ node: node.name, ...task })));
        const changes = status.recentChanges.map((change) => ({
          at: new Date(change.at).toISOString(),
          phone: change.phone,
          reason: change.reason,
          from_node_id: change.fromNodeId,
          to_node_id: change.toNodeId,
          epoch: change.epoch,
        }));
        output.print(
          { nodes, unowned_phones: status.unownedPhones, recent_changes: changes },
          [
            table(
              nodes.map((node) => ({ ...node, phones: undefined, tasks: undefined })),
              ['name', 'id', 'state', 'heartbeat_age_ms', 'numbers', 'url'],
            ),
            'Periodic tasks of the live nodes:',
            table(taskRows, ['node', 'name', 'scope', 'interval_ms', 'runs', 'failures', 'last_run_at']),
            `Unowned numbers: ${status.unownedPhones.length === 0 ? 'none' : status.unownedPhones.join(', ')}`,
            'Recent changes of owner:',
            table(changes, ['at', 'phone', 'reason', 'from_node_id', 'to_node_id', 'epoch']),
          ].join('\n'),
        );
      });
    });

  program
    .command('sandbox-network')
    .description('Run the simulated WhatsApp network that several nodes share (set WAGW_SANDBOX_NETWORK=tcp://host:port on each)')
    .option('--host <host>', 'the address to listen on: loopback unless the nodes run on other machines', '127.0.0.1')
    .option('--port <port>', 'the port to listen on', '7400')
    .option('--journal <file>', 'append every connection, replacement, send and delivery to this file, one JSON object a line')
    .option('--groups <file>', "keep the network's groups in this file, so that they outlive a restart of the network")
    .action(async (options: { host: string; port: string; journal?: string; groups?: string }) => {
      const config = loadConfig();
      // The same key as the nodes': each must prove it holds WAGW_SECRET_KEY before it is heard.
      const secretKey = loadSecretKey(config.secretKey, config.dataDirectory, createLogger(config, process.stderr));
      const network = await serveSandboxNetwork({
        host: options.host,
        key: deriveSandboxNetworkKey(secretKey),
        maxLineBytes: config.cluster.sandboxNetworkMaxLineBytes,
        port: parseWholeNumber(options.port, '--port'),
        ...(options.journal !== undefined && { journalFile: options.journal }),
        ...(options.groups !== undefined && { groupsFile: options.groups }),
      });
      process.stdout.write(`Sandbox network listening on tcp://${options.host}:${network.port}\n`);
      const stop = () => void network.close().then(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
}
