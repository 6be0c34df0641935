// A stand-in for the Gemini API's generateContent, for a real client (Gemini CLI) pointed at it with
// GOOGLE_GEMINI_BASE_URL: it records the tools each request offers the model, and the test's script says what the
// model answers.
import type { IncomingMessage, ServerResponse } from "node:http";
import { StandInApi, type ModelScript, type ModelTurn } from "./model-api.js";

interface Part {
  text?: string;
  functionCall?: { name: string; args: Record<string, unknown> };
  functionResponse?: { name: string; response: unknown };
}

export class StandInGemini extends StandInApi {
  static start(script: ModelScript): Promise<StandInGemini> {
    return new StandInGemini(script).listen();
  }

  protected async serve(request: IncomingMessage, body: string, response: ServerResponse): Promise<void> {
    const url = request.url ?? "";
    if (request.method !== "POST" || !/:(stream)?generateContent/i.test(url)) {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ totalTokens: 1 }));
      return;
    }
    const sent = JSON.parse(body) as {
      tools?: Array<{ functionDeclarations?: Array<{ name: string }> }>;
      contents?: Array<{ role: string; parts?: Part[] }>;
    };
    const tools = (sent.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name));
    let turn: ModelTurn = { text: "ok" };
    if (tools.length > 0) {
      // The results of the model's last function calls are the parts of the last content, when it answers them.
      const last = sent.contents?.at(-1)?.parts ?? [];
      const results = last.flatMap(({ functionResponse }) =>
        functionResponse ? [{ tool: functionResponse.name, text: JSON.stringify(functionResponse.response) }] : [],
      );
      // The prompt: the text of the last user content that holds text.
      const said = (sent.contents ?? []).findLast((content) => content.role === "user" && (content.parts ?? []).some((part) => part.text));
      const prompt = (said?.parts ?? []).flatMap((part) => (part.text ? [part.text] : [])).join("\n");
      const seen = { tools, results, prompt };
      this.requests.push(seen);
      turn = await this.script(seen);
    }
    const part: Part = "text" in turn ? { text: turn.text } : { functionCall: { name: turn.use, args: turn.input } };
    const answer = {
      candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
    };
    if (url.includes("alt=sse")) {
      response.writeHead(200, { "content-type": "text/event-stream" }).end(`data: ${JSON.stringify(answer)}\n\n`);
      return;
    }
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  }
}
