/**
 * The stand-in's checks of a template message object (graph-api-stand-in.ts), as Meta's Cloud
 * API reference gives its shape: `{name, language: {code}, components}` where each component is
 * a `header` or `body` with its parameters (a text, or a media header's file by id or link), or a
 * `button` with its `sub_type`, its `index` as a string and one parameter (a URL button's `text`
 * suffix, a quick-reply button's `payload`). What Meta checks against the approved template (the
 * template exists, a media header gets a file of its format, a button parameter names a button
 * of its sub_type) is checked against the stand-in's listing, and a file id against its uploads.
 */

const HEADER_MEDIA = ['image', 'video', 'document'];
const BUTTON_PARAMETER: Record<string, string> = { url: 'text', quick_reply: 'payload' };
const LISTED_BUTTON: Record<string, string> = { url: 'URL', quick_reply: 'QUICK_REPLY' };

type Json = Record<string, unknown>;

function extraFields(object: Json, allowed: readonly string[], what: string): string | undefined {
  const extra = Object.keys(object).filter((key) => !allowed.includes(key));
  return extra.length > 0 ? `${what} takes no ${extra.join(', ')}` : undefined;
}

/** What is off Meta's shape of a template object, or off the template it names; undefined when none is. */
export function templateProblem(template: Json, listed: readonly Json[], uploaded: (id: string) => boolean): string | undefined {
  if (typeof template.name !== 'string' || typeof (template.language as Json | undefined)?.code !== 'string')
    return 'template needs name and language.code';
  const extra = extraFields(template, ['name', 'language', 'components'], 'the template object');
  if (extra !== undefined) return extra;
  const found = listed.find((each) => each.name === template.name && each.language === (template.language as Json).code);
  if (found === undefined) return `(#132001) the template ${template.name} does not exist in ${(template.language as Json).code}`;
  if (template.components === undefined) return undefined;
  if (!Array.isArray(template.components)) return 'template.components is a list';
  const listedComponents = (found.components ?? []) as Json[];
  for (const component of template.components as Json[]) {
    const problem =
      component.type === 'button' ? buttonProblem(component, listedComponents) : partProblem(component, listedComponents, uploaded);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** A header or body component: its parameters, texts or (a header only) one file of the header's format. */
function partProblem(component: Json, listed: readonly Json[], uploaded: (id: string) => boolean): string | undefined {
  if (component.type !== 'header' && component.type !== 'body')
    return `component type ${String(component.type)} is not header, body or button`;
  const extra = extraFields(component, ['type', 'parameters'], `a ${component.type} component`);
  if (extra !== undefined) return extra;
  if (!Array.isArray(component.parameters) || component.parameters.length === 0)
    return `a ${component.type} component has a list of parameters`;
  const format = String(listed.find((each) => each.type === 'HEADER')?.format ?? 'TEXT').toLowerCase();
  for (const parameter of component.parameters as Json[]) {
    if (parameter.type === 'text') {
      if (typeof parameter.text !== 'string' || parameter.text === '') return 'a text parameter is {type: "text", text}';
      if (component.type === 'header' && format !== 'text') return `(#132012) the header is ${format}; a text parameter was given`;
      continue;
    }
    if (component.type !== 'header' || !HEADER_MEDIA.includes(String(parameter.type)))
      return `a ${component.type} parameter of type ${String(parameter.type)} is not one Meta takes here`;
    if (parameter.type !== format) return `(#132012) the header is ${format}; a ${String(parameter.type)} was given`;
    const file = parameter[format] as Json | undefined;
    const problem = extraFields(parameter, ['type', format], `a ${format} parameter`);
    if (problem !== undefined) return problem;
    if (typeof file !== 'object' || file === null) return `a ${format} parameter carries a ${format} object`;
    const fileExtra = extraFields(file, format === 'document' ? ['id', 'link', 'filename'] : ['id', 'link'], `the ${format} object`);
    if (fileExtra !== undefined) return fileExtra;
    if (typeof file.id === 'string' ? !uploaded(file.id) : typeof file.link !== 'string')
      return `the ${format} object needs the id of an uploaded file or a link; got ${JSON.stringify(file)}`;
  }
  return undefined;
}

/** A button component: a sub_type the listed button at its index has, and that button's one parameter. */
function buttonProblem(component: Json, listed: readonly Json[]): string | undefined {
  const extra = extraFields(component, ['type', 'sub_type', 'index', 'parameters'], 'a button component');
  if (extra !== undefined) return extra;
  const subType = String(component.sub_type);
  const parameterType = BUTTON_PARAMETER[subType];
  if (parameterType === undefined) return `button sub_type ${subType} is not url or quick_reply`;
  if (typeof component.index !== 'string' || !/^\d$/.test(component.index)) return 'a button index is a string, "0" to "9"';
  const buttons = (listed.find((each) => each.type === 'BUTTONS')?.buttons ?? []) as Json[];
  const button = buttons[Number(component.index)];
  if (button === undefined || button.type !== LISTED_BUTTON[subType])
    return `(#132000) the template has no ${subType} button at index ${component.index}`;
  const parameters = component.parameters as Json[] | undefined;
  const [parameter] = parameters ?? [];
  if (parameters?.length !== 1 || parameter === undefined || parameter.type !== parameterType)
    return `a ${subType} button takes one parameter of type ${parameterType}`;
  const problem = extraFields(parameter, ['type', parameterType], `a ${parameterType} parameter`);
  if (problem !== undefined) return problem;
  return typeof parameter[parameterType] === 'string' && parameter[parameterType] !== ''
    ? undefined
    : `a ${parameterType} parameter carries its ${parameterType}`;
}
