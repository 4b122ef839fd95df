import { forEachChild, parse, type Command, type Script, type SyntaxNode, type Word, type WordPart } from 'unbash';

/*
 * Shell command lines split into words by one parser, unbash
 * (https://github.com/webpro-nl/unbash), for everything that reads a
 * command: the hook's matcher, and `vouch init` reading package.json scripts.
 */

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

/**
 * The words of every simple command in a script, wherever it stands (in a
 * chain, a pipeline, a subshell, a substitution), with quotes removed from
 * the command's words and redirections left out; leading assignments are
 * kept as written. Enough to name the programs
 * a script runs; a script that does not parse yields what was read before
 * the error.
 */
export function simpleCommands(text: string): string[][] {
  let script: Script;
  try {
    script = parse(text);
  } catch {
    return [];
  }
  const commands: string[][] = [];
  const visit = (node: SyntaxNode) => {
    if (node.type === 'Command' && node.name !== undefined) {
      const assignments = node.prefix.flatMap((item) => (item.type === 'Assignment' ? [item.text] : []));
      const words = [node.name, ...node.suffix].flatMap((item) => (item.type === 'Word' ? [item.value] : []));
      commands.push([...assignments, ...words]);
    }
    forEachChild(node, visit);
  };
  for (const statement of script.commands) visit(statement);
  return commands;
}

/** A word of characters no shell treats specially: nothing to quote, escape or expand. */
const PLAIN_WORD = /^[A-Za-z0-9_./:=@+,%-]+$/;

/**
 * The argv of a command line that is one plain simple command: plain words
 * separated by spaces, and nothing else (no assignment, quote, expansion,
 * redirection, operator or comment). Null for anything more.
 */
export function plainCommand(text: string): string[] | null {
  const trimmed = text.trim();
  const script = parseShell(trimmed);
  if (script === null || script.commands.length !== 1) return null;
  const command = script.commands[0]!.command;
  if (command.type !== 'Command' || command.name === undefined || command.prefix.length > 0) return null;
  const argv: string[] = [];
  let end = 0;
  for (const word of [command.name, ...command.suffix]) {
    if (word.type !== 'Word' || !PLAIN_WORD.test(word.text)) return null;
    // Only spaces between the words: what is not a word would be an operator or a comment.
    if (!/^ *$/.test(trimmed.slice(end, word.pos))) return null;
    argv.push(word.text);
    end = word.end;
  }
  return end === trimmed.length ? argv : null;
}

/**
 * The words of every simple command in a command line, wherever it stands
 * (in a chain, a pipeline, a subshell, a substitution), each the value the
 * shell passes on, or null where the shell would expand it (see staticWord).
 * Leading assignments and redirections are left out. Null when the line does
 * not parse: a reader that must not miss a command then assumes the worst.
 */
export function commandWords(text: string): (string | null)[][] | null {
  const script = parseShell(text);
  if (script === null) return null;
  const commands: (string | null)[][] = [];
  const visit = (node: SyntaxNode) => {
    if (node.type === 'Command' && node.name !== undefined) {
      commands.push([node.name, ...node.suffix].flatMap((item) => (item.type === 'Word' ? [staticWord(item)] : [])));
    }
    forEachChild(node, visit);
  };
  for (const statement of script.commands) visit(statement);
  return commands;
}
