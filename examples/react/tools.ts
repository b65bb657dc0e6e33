// The one tool: a shell.
export const tools = {
  bash: {
    description: "Run a bash command",
    // TODO: give each call a deadline
    run: async (args: { command: string }) => exec(args.command),
  },
};
