import { describe, expect, it } from 'vitest';
import type { CheckContext } from '../../src/core/context.js';
import type { CheckDefinition } from '../../src/core/definition.js';
import { sha256 } from '../../src/core/digest.js';
import { describeContextChange, diffContext, diffDefinition, diffManifest, type InputChange, type ValueChange } from '../../src/core/diff.js';
import { SCRIPT_BODY_LIMIT, scriptBody } from '../../src/core/scriptContext.js';
import type { InputEntry } from '../../src/core/manifest.js';
import { context, definition, exe, installed, link, source } from '../helpers/model.js';

const ID = '10:20:30:644:1:40:50';

describe('diffManifest(before, after)', () => {
  const rows: { name: string; before: InputEntry[]; after: InputEntry[]; changes: InputChange[] }[] = [
    { name: 'two empty manifests', before: [], after: [], changes: [] },
    { name: 'equal manifests', before: [source('a'), installed('n/x', ID), link('l', 't')], after: [source('a'), installed('n/x', ID), link('l', 't')], changes: [] },
    {
      name: 'a source file added',
      before: [],
      after: [source('a', 'da', true)],
      changes: [{ change: 'added', path: 'a', origin: 'source', new: { type: 'file', digest: 'da', executable: true } }],
    },
    {
      name: 'an installed file removed',
      before: [installed('n/x', ID)],
      after: [],
      changes: [{ change: 'removed', path: 'n/x', origin: 'installed', old: { type: 'file', identity: ID } }],
    },
    {
      name: 'a source file edited',
      before: [source('a', 'd1')],
      after: [source('a', 'd2')],
      changes: [{ change: 'modified', path: 'a', origin: 'source', old: { type: 'file', digest: 'd1', executable: false }, new: { type: 'file', digest: 'd2', executable: false } }],
    },
    {
      name: 'a source file made executable, same bytes',
      before: [source('a', 'd')],
      after: [source('a', 'd', true)],
      changes: [{ change: 'mode', path: 'a', origin: 'source', old: { type: 'file', digest: 'd', executable: false }, new: { type: 'file', digest: 'd', executable: true } }],
    },
    {
      name: 'new bytes and a new mode: the edit is what is reported',
      before: [source('a', 'd1')],
      after: [source('a', 'd2', true)],
      changes: [{ change: 'modified', path: 'a', origin: 'source', old: { type: 'file', digest: 'd1', executable: false }, new: { type: 'file', digest: 'd2', executable: true } }],
    },
    {
      name: 'an installed file with a new identity names the fields that moved',
      before: [installed('n/x', '10:20:30:644:1:40:50')],
      after: [installed('n/x', '10:21:30:644:1:41:51')],
      changes: [
        {
          change: 'identity',
          path: 'n/x',
          origin: 'installed',
          fields: ['ino', 'mtime_ns', 'ctime_ns'],
          old: { type: 'file', identity: '10:20:30:644:1:40:50' },
          new: { type: 'file', identity: '10:21:30:644:1:41:51' },
        },
      ],
    },
    {
      name: 'an installed file whose digests differ is modified, whatever its identity',
      before: [installed('n/x', ID, 'h1')],
      after: [installed('n/x', ID, 'h2')],
      changes: [{ change: 'modified', path: 'n/x', origin: 'installed', old: { type: 'file', identity: ID, digest: 'h1' }, new: { type: 'file', identity: ID, digest: 'h2' } }],
    },
    {
      name: 'an installed file hashed on one side only, same identity: no change',
      before: [installed('n/x', ID)],
      after: [installed('n/x', ID, 'h')],
      changes: [],
    },
    {
      name: 'an installed file hashed on one side only, new identity: an identity change',
      before: [installed('n/x', ID, 'h')],
      after: [installed('n/x', '10:20:31:644:1:40:50')],
      changes: [
        { change: 'identity', path: 'n/x', origin: 'installed', fields: ['size'], old: { type: 'file', identity: ID, digest: 'h' }, new: { type: 'file', identity: '10:20:31:644:1:40:50' } },
      ],
    },
    {
      name: 'a link retargeted',
      before: [link('l', 'one')],
      after: [link('l', 'two')],
      changes: [{ change: 'modified', path: 'l', origin: 'source', old: { type: 'symlink', target: 'one' }, new: { type: 'symlink', target: 'two' } }],
    },
    {
      name: 'a file replaced by a link',
      before: [source('a', 'd')],
      after: [link('a', 'b')],
      changes: [{ change: 'type', path: 'a', origin: 'source', old: { type: 'file', digest: 'd', executable: false }, new: { type: 'symlink', target: 'b' } }],
    },
    {
      name: 'a path that moves from source to installed',
      before: [source('a', 'd')],
      after: [installed('a', ID)],
      changes: [{ change: 'type', path: 'a', origin: 'installed', old: { type: 'file', digest: 'd', executable: false }, new: { type: 'file', identity: ID } }],
    },
    {
      name: 'interleaved adds, removals and edits, in path order',
      before: [source('a'), source('c', 'c1'), source('e'), source('g')],
      after: [source('b'), source('c', 'c2'), source('e'), source('h')],
      changes: [
        { change: 'removed', path: 'a', origin: 'source', old: { type: 'file', digest: 'digest-of-a', executable: false } },
        { change: 'added', path: 'b', origin: 'source', new: { type: 'file', digest: 'digest-of-b', executable: false } },
        { change: 'modified', path: 'c', origin: 'source', old: { type: 'file', digest: 'c1', executable: false }, new: { type: 'file', digest: 'c2', executable: false } },
        { change: 'removed', path: 'g', origin: 'source', old: { type: 'file', digest: 'digest-of-g', executable: false } },
        { change: 'added', path: 'h', origin: 'source', new: { type: 'file', digest: 'digest-of-h', executable: false } },
      ],
    },
    {
      name: 'paths compare by code unit, as manifests sort them',
      before: [source('B'), source('a')],
      after: [source('a'), source('b')],
      changes: [
        { change: 'removed', path: 'B', origin: 'source', old: { type: 'file', digest: 'digest-of-B', executable: false } },
        { change: 'added', path: 'b', origin: 'source', new: { type: 'file', digest: 'digest-of-b', executable: false } },
      ],
    },
  ];

  it.each(rows)('$name', ({ before, after, changes }) => {
    expect(diffManifest(before, after)).toEqual(changes);
  });
});

describe('diffContext(old, now)', () => {
  const rows: { name: string; now: Partial<CheckContext>; changes: ValueChange[] }[] = [
    { name: 'the same context', now: {}, changes: [] },
    { name: 'argv', now: { argv: ['node', 'other.mjs'] }, changes: [{ field: 'argv', old: ['node', 'check.mjs'], new: ['node', 'other.mjs'] }] },
    { name: 'the executable', now: { executable: exe('/usr/bin/node', 'other') }, changes: [{ field: 'executable', old: exe('/usr/bin/node'), new: exe('/usr/bin/node', 'other') }] },
    { name: 'no executable any more', now: { executable: null }, changes: [{ field: 'executable', old: exe('/usr/bin/node'), new: null }] },
    { name: "node's version", now: { node: { version: 'v22.1.0', executable: exe('/usr/bin/node') } }, changes: [{ field: 'node.version', old: 'v20.19.0', new: 'v22.1.0' }] },
    { name: "node's executable", now: { node: { version: 'v20.19.0', executable: exe('/opt/node') } }, changes: [{ field: 'node.executable', old: exe('/usr/bin/node'), new: exe('/opt/node') }] },
    { name: 'the platform', now: { platform: 'darwin' }, changes: [{ field: 'platform', old: 'linux', new: 'darwin' }] },
    { name: 'the arch', now: { arch: 'arm64' }, changes: [{ field: 'arch', old: 'x64', new: 'arm64' }] },
    {
      name: 'the package manager',
      now: { packageManager: { name: 'pnpm', version: '9.0.0', executable: null } },
      changes: [{ field: 'package_manager', old: null, new: { name: 'pnpm', version: '9.0.0', executable: null } }],
    },
    { name: 'a variable set', now: { env: { CI: 'k1', NODE_ENV: null } }, changes: [{ field: 'env.CI', old: 'unset', new: 'set' }] },
    { name: 'a variable newly recorded and set', now: { env: { CI: null, NODE_ENV: null, FOO: 'k' } }, changes: [{ field: 'env.FOO', old: 'unset', new: 'set' }] },
    { name: 'a variable no longer recorded', now: { env: { NODE_ENV: null } }, changes: [] },
    {
      name: 'every field at once, in a fixed order, variables by sorted name',
      now: {
        argv: ['x'],
        executable: null,
        node: { version: 'v21.0.0', executable: null },
        platform: 'win32',
        arch: 'ia32',
        packageManager: { name: 'npm', version: null, executable: null },
        env: { ZED: 'k', CI: 'k', NODE_ENV: null },
      },
      changes: [
        { field: 'argv', old: ['node', 'check.mjs'], new: ['x'] },
        { field: 'executable', old: exe('/usr/bin/node'), new: null },
        { field: 'node.version', old: 'v20.19.0', new: 'v21.0.0' },
        { field: 'node.executable', old: exe('/usr/bin/node'), new: null },
        { field: 'platform', old: 'linux', new: 'win32' },
        { field: 'arch', old: 'x64', new: 'ia32' },
        { field: 'package_manager', old: null, new: { name: 'npm', version: null, executable: null } },
        { field: 'env.CI', old: 'unset', new: 'set' },
        { field: 'env.ZED', old: 'unset', new: 'set' },
      ],
    },
  ];

  it.each(rows)('$name', ({ now, changes }) => {
    expect(diffContext(context(), context(now))).toEqual(changes);
  });

  it('says a variable changed or was unset by name only, never by its value or digest', () => {
    const old = context({ env: { A: 'digest-1', B: 'digest-2', C: null } });
    const now = context({ env: { A: 'digest-3', B: null, C: null } });
    const changes = diffContext(old, now);
    expect(changes).toEqual([
      { field: 'env.A', old: 'set', new: 'changed' },
      { field: 'env.B', old: 'set', new: 'unset' },
    ]);
    expect(JSON.stringify(changes)).not.toMatch(/digest-/);
  });

  it('names a script whose body changed, appeared or went, with its bodies; not one that stayed', () => {
    const old = context({ scripts: [scriptBody('a', 'same'), scriptBody('gone', 'x'), scriptBody('typecheck', 'tsc --noEmit')] });
    const now = context({ scripts: [scriptBody('a', 'same'), scriptBody('new', 'y'), scriptBody('typecheck', 'echo skipped')] });
    const changes = diffContext(old, now);
    const value = (body: string) => ({ body, digest: sha256(body) });
    expect(changes).toEqual([
      { field: 'script.gone', old: value('x'), new: null },
      { field: 'script.new', old: null, new: value('y') },
      { field: 'script.typecheck', old: value('tsc --noEmit'), new: value('echo skipped') },
    ]);
    expect(changes.map(describeContextChange)).toEqual([
      'script gone: `x` -> (not run)',
      'script new: (not run) -> `y`',
      'script typecheck: `tsc --noEmit` -> `echo skipped`',
    ]);
  });

  it('a long body is described by its digest; a receipt without scripts reads each as added', () => {
    const long = 'z'.repeat(SCRIPT_BODY_LIMIT + 1);
    const changes = diffContext(context(), context({ scripts: [scriptBody('big', long)] }));
    expect(changes).toEqual([{ field: 'script.big', old: null, new: { body: null, digest: sha256(long) } }]);
    expect(describeContextChange(changes[0]!)).toBe(`script big: (not run) -> (sha256 ${sha256(long).slice(0, 12)}…, longer than ${SCRIPT_BODY_LIMIT} characters)`);
    expect(describeContextChange({ field: 'arch', old: 'x64', new: 'arm64' })).toBe('arch: "x64" -> "arm64"');
  });

  it('compares values canonically, not by key order', () => {
    const old = context({ packageManager: { name: 'npm', version: '10.0.0', executable: null } });
    const now = context({ packageManager: { executable: null, version: '10.0.0', name: 'npm' } });
    expect(diffContext(old, now)).toEqual([]);
  });
});

describe('diffDefinition(old, now)', () => {
  it('is empty for equal definitions', () => {
    expect(diffDefinition(definition(), definition())).toEqual([]);
  });

  it.each([
    ['name', { name: 'u' }],
    ['kind', { kind: 'lint' }],
    ['script', { script: 'test' }],
    ['command', { command: ['vitest', 'run'] }],
    ['inputs', { inputs: ['src/**'] }],
    ['installed', { installed: [] }],
    ['env', { env: ['FOO'] }],
    ['packageManager', { packageManager: 'pnpm' }],
  ] as [keyof CheckDefinition, Partial<CheckDefinition>][])('names a changed %s with both values', (field, change) => {
    const old = definition();
    const now = definition(change);
    expect(diffDefinition(old, now)).toEqual([{ field, old: old[field], new: now[field] }]);
  });

  it('lists several changes in the definition\'s field order', () => {
    const changes = diffDefinition(definition(), definition({ env: ['X'], command: null, script: 'lint' }));
    expect(changes.map((c) => c.field)).toEqual(['script', 'command', 'env']);
  });
});
