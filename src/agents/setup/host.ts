/** The agents `vouch agent` can set up, and where each one reads hooks, instructions, skills and MCP servers. */
export const AGENT_HOSTS = ['claude', 'codex'] as const;
export type AgentHost = (typeof AGENT_HOSTS)[number];

export interface HookSpec {
  event: 'PreToolUse' | 'SessionStart';
  matcher: string;
  /** Seconds. The hook fails open on its own long before this; the limit only bounds a hung process. */
  timeout: number;
}

export interface HostLayout {
  host: AgentHost;
  /** How people call the agent, in messages. */
  title: string;
  /** Root-relative paths, with `/`. */
  hooksFile: string;
  instructionsFile: string;
  skillFile: string;
  /** Where the project registers MCP servers; vouch's entry is named `vouch`. */
  mcpFile: string;
  hooks: HookSpec[];
}

export const HOST_LAYOUTS: Record<AgentHost, HostLayout> = {
  claude: {
    host: 'claude',
    title: 'Claude Code',
    // The local file: hooks that name this machine's vouch must not be committed for everyone.
    hooksFile: '.claude/settings.local.json',
    instructionsFile: 'CLAUDE.md',
    skillFile: '.claude/skills/vouch/SKILL.md',
    // The project scope: Claude Code asks before it starts a server from this file.
    mcpFile: '.mcp.json',
    hooks: [
      { event: 'PreToolUse', matcher: 'Bash', timeout: 30 },
      { event: 'SessionStart', matcher: 'startup|resume|clear|compact', timeout: 10 },
    ],
  },
  codex: {
    host: 'codex',
    title: 'Codex',
    hooksFile: '.codex/hooks.json',
    instructionsFile: 'AGENTS.md',
    skillFile: '.agents/skills/vouch/SKILL.md',
    // Read only in a project the user trusts.
    mcpFile: '.codex/config.toml',
    hooks: [
      { event: 'PreToolUse', matcher: 'Bash', timeout: 30 },
      // Codex has no "compact" source for SessionStart.
      { event: 'SessionStart', matcher: 'startup|resume|clear', timeout: 10 },
    ],
  },
};

export function isAgentHost(value: string): value is AgentHost {
  return (AGENT_HOSTS as readonly string[]).includes(value);
}
