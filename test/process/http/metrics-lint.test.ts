import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { startListeningGateway, type ListeningGateway } from '../listening-gateway.ts';

const TOKEN = 'metrics-token-for-the-lint-0123456789';
const PROMTOOL = process.env.WAGW_PROMTOOL_PATH ?? '/usr/bin/promtool';

/**
 * Prometheus' own linter on a real scrape: what a monitoring system reads must pass its checks
 * (counters end in _total and nothing else does, units are in names, help on every metric).
 * scripts/test.sh installs Debian's prometheus package for promtool; without it this fails.
 */
for (const dialect of dialects) {
  describe(`promtool check metrics on a live scrape (${dialect})`, () => {
    let listening: ListeningGateway;

    before(async () => {
      listening = await startListeningGateway(dialect, { WAGW_METRICS_TOKEN: TOKEN });
    });
    after(() => listening?.close());

    it('the scrape of a gateway that has sent and received is lint clean', async () => {
      assert.ok(
        fs.existsSync(PROMTOOL),
        `promtool is missing at ${PROMTOOL}: install Debian's prometheus package (scripts/test.sh does this as root)`,
      );
      const base = `http://127.0.0.1:${listening.port}`;
      const { sender } = listening;
      const send = await fetch(`${base}/send_message`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sender.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from_phone: sender.phones[0], to_phone: '+14155550100', message: 'for the scrape' }),
      });
      assert.equal(send.status, 200);
      const scrape = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(scrape.status, 200);
      const exposition = await scrape.text();
      assert.match(exposition, /wagw_nodejs_active_handles /, 'the per-type process gauges remain');
      const lint = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
      assert.equal(lint.status, 0, `promtool found problems:\n${lint.stdout}${lint.stderr}`);
      assert.equal(`${lint.stdout}${lint.stderr}`.trim(), '', 'no warnings either');
    });
  });
}
