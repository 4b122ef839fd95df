import type { AndOr, Command, PipelineNode, Script, Statement, Word } from 'unbash';

/*
 * The hook's view of a parsed command: its top-level chain and each simple
 * command's words. Parsing and reading words is core/shellWords.ts.
 */

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
