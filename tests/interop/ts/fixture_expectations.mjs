// The fixture's expected values (tests/interop/fixture.json, shared with the Python client) and
// the two computed expectations: prompt messages for given arguments, and the elicitation answer.

import { readFileSync } from 'node:fs';

/** Names, contents and schemas the fixture must serve. */
export const FIXTURE = JSON.parse(readFileSync(new URL('../fixture.json', import.meta.url), 'utf8'));

const user = (content) => ({ role: 'user', content });

/** The messages prompts/get must return for prompt `name` called with `args`. */
export function expectedPromptMessages(name, args = {}) {
  switch (name) {
    case 'test_simple_prompt':
      return [user({ type: 'text', text: 'This is a simple prompt for testing.' })];
    case 'test_prompt_with_arguments':
      return [user({ type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` })];
    case 'test_prompt_with_embedded_resource':
      return [
        user({
          type: 'resource',
          resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
        }),
        user({ type: 'text', text: 'Please process the embedded resource above.' }),
      ];
    case 'test_prompt_with_image':
      return [
        user({ type: 'image', data: FIXTURE.png, mimeType: 'image/png' }),
        user({ type: 'text', text: 'Please analyze the image above.' }),
      ];
    default:
      throw new Error(`no expectation for prompt ${name}`);
  }
}

/** Answers a form elicitation: each field's default, else its first allowed value, else a marker. */
export function fillElicitation(schema) {
  const content = {};
  for (const [field, prop] of Object.entries(schema?.properties ?? {})) {
    if (prop.default !== undefined) content[field] = prop.default;
    else if (prop.type === 'array') {
      const first = prop.items?.enum?.[0] ?? prop.items?.anyOf?.[0]?.const;
      content[field] = first === undefined ? [] : [first];
    } else if (Array.isArray(prop.enum)) content[field] = prop.enum[0];
    else if (Array.isArray(prop.oneOf)) content[field] = prop.oneOf[0].const;
    else if (prop.type === 'integer') content[field] = 7;
    else if (prop.type === 'number') content[field] = 7.5;
    else if (prop.type === 'boolean') content[field] = true;
    else content[field] = `interop answer for ${field}`;
  }
  return content;
}
