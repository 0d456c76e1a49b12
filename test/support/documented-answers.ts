import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** One answer the gateway gave, by the document's path of its operation. */
export interface RecordedAnswer {
  method: string;
  path: string;
  status: number;
  contentType: string | null;
  body: string;
}

interface DocumentedResponse {
  $ref?: string;
  content?: Record<string, { schema?: object }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, DocumentedResponse> }>>;
  components: { responses?: Record<string, DocumentedResponse> };
}

/**
 * Checks answers against the document the gateway serves, as an independent client would (Ajv
 * 2020 over `/openapi.json`): the status is one the operation lists, and a JSON body matches its
 * schema, so a refusal's code must be among those the document gives for that status.
 */
export function documentChecker(document: object): (answer: RecordedAnswer) => string | undefined {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi.json');
  const { paths, components } = document as OpenApiDocument;
  const pointerPart = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');
  return (answer) => {
    const method = answer.method.toLowerCase();
    const operation = paths[answer.path]?.[method];
    if (operation === undefined) return `${answer.method} ${answer.path} is not in the document`;
    let response = operation.responses[String(answer.status)];
    let pointer = `openapi.json#/paths/${pointerPart(answer.path)}/${method}/responses/${answer.status}`;
    if (response?.$ref !== undefined) {
      const name = response.$ref.split('/').pop()!;
      response = components.responses?.[name];
      pointer = `openapi.json#/components/responses/${pointerPart(name)}`;
    }
    if (response === undefined)
      return `${answer.method} ${answer.path} answered ${answer.status}, which the document does not list: ${answer.body}`;
    if (answer.contentType === null || !/^application\/json/.test(answer.contentType) || answer.body === '') return undefined;
    if (response.content?.['application/json']?.schema === undefined) return undefined;
    const validate = ajv.compile({ $ref: `${pointer}/content/application~1json/schema` });
    return validate(JSON.parse(answer.body))
      ? undefined
      : `${answer.method} ${answer.path} ${answer.status}: ${ajv.errorsText(validate.errors)} in ${answer.body.slice(0, 500)}`;
  };
}
