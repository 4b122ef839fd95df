import { describe, expect, it } from 'vitest';
import type { CheckAnswer } from '../../src/agents/commandDecision.js';
import { hookLedgerEntry, type HookFacts } from '../../src/agents/hookLedger.js';
import { desiredHookEntries, hookModeOf, isVouchHandler } from '../../src/agents/setup/hookEntries.js';
import { HOST_LAYOUTS } from '../../src/agents/setup/host.js';

/* What the hook records, and how setup writes and recognises a hook entry in each mode. */

function answer(name: string, over: Partial<CheckAnswer> = {}): CheckAnswer {
  return { name, freshness: 'CURRENT', result: 'PASS', reuseEligible: true, runId: `run-${name}`, finishedAt: 1, durationMs: 1500.4, ...over };
}

function facts(over: Partial<HookFacts>): HookFacts {
  return {
    host: 'claude',
    session: 's',
    command: 'npm test',
    mode: 'enforce',
    decision: 'deny',
    evaluated: { kind: 'deny', reason: 'r', checks: ['test'] },
    answers: [answer('test')],
    forced: false,
    latencyMs: 87.6,
    at: 5,
    ...over,
  };
}

describe('the hook\'s ledger entry', () => {
  it('a deny relies on each matched check\'s CURRENT PASS reusable receipt', () => {
    expect(hookLedgerEntry(facts({}))).toEqual({
      at: 5,
      source: 'hook',
      host: 'claude',
      session: 's',
      mode: 'enforce',
      decision: 'deny',
      forced: false,
      command: 'npm test',
      checks: ['test'],
      receipts: [{ check: 'test', run_id: 'run-test', duration_ms: 1500 }],
      latency_ms: 88,
    });
  });

  it('a rewrite relies only on the checks --if-due would skip; a pass on none', () => {
    const answers = [answer('test'), answer('lint', { freshness: 'STALE' }), answer('build', { result: 'FAIL' }), answer('types', { reuseEligible: false })];
    const evaluated = { kind: 'rewrite' as const, command: 'x', why: 'y', checks: ['test', 'lint', 'build', 'types'] };
    expect(hookLedgerEntry(facts({ decision: 'rewrite', evaluated, answers })).receipts).toEqual([{ check: 'test', run_id: 'run-test', duration_ms: 1500 }]);
    expect(hookLedgerEntry(facts({ decision: 'pass', evaluated: { kind: 'pass', why: 'forced', checks: ['test'] }, forced: true })).receipts).toEqual([]);
  });

  it('keeps a long command short', () => {
    expect(hookLedgerEntry(facts({ command: 'npm test && '.repeat(10_000) })).command!.length).toBe(512);
  });
});

describe('hook entries in each mode', () => {
  const specs = HOST_LAYOUTS.claude.hooks;
  it('shadow mode adds --shadow to each handler, and both forms are vouch\'s own', () => {
    const shadow = desiredHookEntries('claude', specs, "'/usr/bin/node' '/opt/vouch/dist/bin/main.js'", 'shadow');
    expect(shadow.map((entry) => entry.handler.command)).toEqual(specs.map(() => "'/usr/bin/node' '/opt/vouch/dist/bin/main.js' hook claude --shadow"));
    expect(hookModeOf(shadow)).toBe('shadow');
    const enforce = desiredHookEntries('claude', specs, 'vouch');
    expect(hookModeOf(enforce)).toBe('enforce');
    expect(hookModeOf([])).toBeNull();
    for (const command of ['vouch hook claude', 'vouch hook claude --shadow', "'/x/main.js' hook claude --shadow"]) expect(isVouchHandler({ command }, 'claude'), command).toBe(true);
    for (const command of ['vouch hook claude --shadowy', 'vouch hook codex --shadow', 'vouch hook claude --enforce', 'rtk hook claude']) expect(isVouchHandler({ command }, 'claude'), command).toBe(false);
  });
});
