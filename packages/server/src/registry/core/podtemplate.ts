/** core/v1 ReplicationControllers and PodTemplates: defaults, validation and printers. */
import { containerCells } from '../apps/shared.js';
import {
  CONTAINERS_DOC,
  col,
  fieldDoc,
  IMAGES_DOC,
  type KindBehaviour,
  nameColumn,
} from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { dig, ensureObj, formatLabels, str } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { validatePodTemplate } from './podspec.js';
import { defaultPodTemplate } from './podspec-defaults.js';

const podtemplates: KindBehaviour = {
  defaults(obj) {
    defaultPodTemplate(ensureObj(obj, 'template'));
  },
  validate: (obj) => validatePodTemplate(obj.template, 'template'),
  columns: [
    nameColumn(),
    col('Containers', 'string', CONTAINERS_DOC),
    col('Images', 'string', IMAGES_DOC),
    col('Pod Labels', 'string', fieldDoc('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'labels')),
  ],
  row(obj) {
    const [names, images] = containerCells(obj.template);
    return [
      str(dig(obj, 'metadata', 'name')),
      names,
      images,
      formatLabels(dig(obj, 'template', 'metadata', 'labels')),
    ];
  },
};

/** `PodTemplate` (core/v1 `podtemplates`): how the registry serves, validates and prints it. */
export const podTemplateKind: ResourceType = coreKind({
  behaviour: podtemplates,
  resource: 'podtemplates',
  kind: 'PodTemplate',
});
