// The agent loop: ask the model, run the tools it calls, repeat.
import { tools } from "./tools";

export async function loop(model: Model, task: string): Promise<string> {
  const messages: Message[] = [{ role: "user", content: task }];
  for (;;) {
    const reply = await model.complete(messages, tools);
    messages.push(reply);
    if (reply.toolCalls.length === 0) return reply.content;
    // TODO: stop after a maximum number of turns
    for (const call of reply.toolCalls) {
      messages.push(await tools[call.name].run(call.arguments));
    }
  }
}
