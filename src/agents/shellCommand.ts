import { parse, type AndOr, type Command, type PipelineNode, type Script, type Statement, type Word, type WordPart } from 'unbash';

/**
 * Parses a shell command. Null on any parse error, or if the parser throws:
 * the hook fails open rather than guess what a malformed command means.
 */
export function parseShell(command: string): Script | null {
  try {
    const script = parse(command);
    if (script.errors && script.errors.length > 0) return null;
    return script;
  } catch {
    return null;
  }
}

/** One element of a top-level and-or list: what `&&`, `||`, `;` and newlines separate. */
export interface ChainElement {
  node: PipelineNode;
  statement: Statement;
}

/**
 * The top-level and-or lists flattened into their elements, in source order.
 * Nothing nested is visited: commands inside substitutions, subshells,
 * groups, functions, loops and conditionals are never elements.
 */
export function chainElements(script: Script): ChainElement[] {
  const elements: ChainElement[] = [];
  for (const statement of script.commands) {
    const command = statement.command;
    const nodes: readonly PipelineNode[] = command.type === 'AndOr' ? (command as AndOr).commands : [command as PipelineNode];
    for (const node of nodes) elements.push({ node, statement });
  }
  return elements;
}

/**
 * A word's value when the shell would pass it on unchanged: literal text and
 * quotes only. Null for anything the shell expands (parameters, command
 * substitution, globs, braces, a tilde), whose value is not known here.
 */
export function staticWord(word: Word): string | null {
  if (word.parts === undefined) return word.text.includes('~') ? null : word.value;
  for (const part of word.parts) if (!staticPart(part)) return null;
  return word.value;
}

function staticPart(part: WordPart): boolean {
  switch (part.type) {
    case 'Literal':
      return !part.text.includes('~');
    case 'SingleQuoted':
    case 'AnsiCQuoted':
      return true;
    case 'DoubleQuoted':
      return part.parts.every((child) => child.type === 'Literal');
    default:
      return false;
  }
}

/** The argv of a simple command when every word is static; null otherwise. */
export function staticArgv(command: Command): string[] | null {
  if (command.name === undefined) return null;
  const argv: string[] = [];
  for (const word of [command.name, ...command.suffix]) {
    if (word.type !== 'Word') return null;
    const value = staticWord(word);
    if (value === null) return null;
    argv.push(value);
  }
  return argv;
}

/** The words of a simple command and the redirections that follow them, split. */
export function commandWords(command: Command): { words: Word[]; trailing: Command['suffix'] } {
  const words: Word[] = command.name ? [command.name] : [];
  let index = 0;
  for (; index < command.suffix.length; index++) {
    const item = command.suffix[index]!;
    if (item.type !== 'Word') break;
    words.push(item);
  }
  return { words, trailing: command.suffix.slice(index) };
}
