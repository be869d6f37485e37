import type { SeedContribution } from '../../core/pack-api.js';

/**
 * The Healthcare seed: a believable clinic site as content of the `cms` namespace. Pages, the contact form
 * (platform content types of the CMS pack) and two tenant content types registered here, `service` and
 * `practitioner`. Everything is published, so the public runtime shows a working site at once; the CMS
 * pack indexes published content as knowledge entries in its own hooks.
 */

export const SERVICE_SCHEMA = {
  namespace: 'cms',
  name: 'service',
  title: 'Service',
  description: 'A treatment or consultation the clinic offers.',
  schema: {
    type: 'object',
    required: ['title', 'slug'],
    additionalProperties: false,
    properties: {
      title: { type: 'string', minLength: 1, maxLength: 200 },
      summary: { type: 'string', maxLength: 500 },
      content: { type: 'string', maxLength: 100000 },
      durationMinutes: { type: 'integer', minimum: 5, maximum: 480 },
      category: { type: 'string', maxLength: 100 },
    },
  },
};

export const PRACTITIONER_SCHEMA = {
  namespace: 'cms',
  name: 'practitioner',
  title: 'Practitioner',
  description: 'A doctor, therapist or nurse of the clinic.',
  schema: {
    type: 'object',
    required: ['title', 'slug'],
    additionalProperties: false,
    properties: {
      title: { type: 'string', minLength: 1, maxLength: 200, description: 'Full name with academic title' },
      role: { type: 'string', maxLength: 200 },
      specialties: { type: 'array', items: { type: 'string', maxLength: 100 }, maxItems: 20 },
      languages: { type: 'array', items: { type: 'string', maxLength: 50 }, maxItems: 20 },
      content: { type: 'string', maxLength: 100000 },
    },
  },
};

const SERVICES = [
  {
    title: 'General Practice', slug: 'general-practice', category: 'Primary care', durationMinutes: 20,
    summary: 'Check-ups, acute illness and long-term care for adults of every age.',
    content: '## General Practice\n\nOur family doctors see you for colds and infections, back pain, high blood pressure, diabetes and everything in between. We coordinate referrals to specialists and keep your records in one place.\n\n- Same-day appointments for acute complaints\n- Annual health check from age 35\n- Repeat prescriptions within 24 hours',
  },
  {
    title: 'Paediatrics', slug: 'paediatrics', category: 'Children', durationMinutes: 30,
    summary: 'Care for babies, children and teenagers, including all recommended check-ups and vaccinations.',
    content: '## Paediatrics\n\nFrom the first newborn examination to the last teenage check-up, our paediatric team takes time for children and their parents.\n\n- Developmental check-ups (U1–J2)\n- Vaccinations following the national schedule\n- A separate waiting area for children with fever',
  },
  {
    title: 'Physiotherapy', slug: 'physiotherapy', category: 'Rehabilitation', durationMinutes: 45,
    summary: 'Manual therapy, exercise programmes and rehabilitation after injury or surgery.',
    content: '## Physiotherapy\n\nOur physiotherapists help you move without pain again after an injury, an operation or months at a desk.\n\n- Manual therapy and lymphatic drainage\n- Post-operative rehabilitation (knee, hip, shoulder)\n- Personal home exercise plans',
  },
  {
    title: 'Vaccinations & Travel Medicine', slug: 'vaccinations-travel-medicine', category: 'Prevention', durationMinutes: 15,
    summary: 'Routine and travel vaccinations with individual advice before your trip.',
    content: '## Vaccinations & Travel Medicine\n\nPlanning a trip? Come to us six to eight weeks before you leave. We check your vaccination record and advise on malaria prophylaxis and medicines for your travel kit.\n\n- Flu, COVID-19, tetanus, hepatitis A and B\n- Yellow fever (certified centre)\n- Vaccination record check free of charge',
  },
  {
    title: 'Preventive Health Check', slug: 'preventive-health-check', category: 'Prevention', durationMinutes: 60,
    summary: 'A thorough check-up with blood tests, ECG and a personal consultation.',
    content: '## Preventive Health Check\n\nA full hour for your health: we take your history, run blood tests and a resting ECG, and discuss the results with you a few days later.\n\n- Blood count, cholesterol, blood sugar, kidney and liver values\n- Resting ECG and blood pressure profile\n- Skin cancer screening on request',
  },
];

const PRACTITIONERS = [
  {
    title: 'Dr. med. Anna Keller', slug: 'anna-keller', role: 'Specialist in general medicine, medical director',
    specialties: ['General medicine', 'Diabetology'], languages: ['English', 'German'],
    content: 'Dr. Keller studied medicine in Heidelberg and trained at the University Hospital Zurich. She founded the practice in 2012 and looks after patients with chronic conditions such as diabetes and hypertension.',
  },
  {
    title: 'Dr. med. Jonas Weber', slug: 'jonas-weber', role: 'Specialist in paediatrics',
    specialties: ['Paediatrics', 'Allergology'], languages: ['English', 'German', 'French'],
    content: 'Dr. Weber spent eight years at a children\'s hospital before joining the clinic. Parents value his calm manner; children like his collection of stickers.',
  },
  {
    title: 'Maria Santos, MSc', slug: 'maria-santos', role: 'Physiotherapist',
    specialties: ['Manual therapy', 'Sports rehabilitation'], languages: ['English', 'Portuguese', 'Spanish'],
    content: 'Maria Santos holds a master\'s degree in sports physiotherapy and has worked with amateur and professional athletes. She leads our rehabilitation programme after knee and shoulder surgery.',
  },
  {
    title: 'Dr. med. Leila Haddad', slug: 'leila-haddad', role: 'Specialist in internal medicine',
    specialties: ['Internal medicine', 'Travel medicine'], languages: ['English', 'Arabic', 'German'],
    content: 'Dr. Haddad is a certified travel medicine specialist and runs the vaccination clinic. Before joining us she worked for an international aid organisation in East Africa.',
  },
];

function pages(clinic: string) {
  return [
    {
      title: 'Home', slug: 'home',
      seo: { title: `${clinic} – Your family practice`, description: `${clinic}: general practice, paediatrics and physiotherapy under one roof. Appointments within 48 hours.` },
      content: `# Welcome to ${clinic}\n\nGeneral practice, paediatrics and physiotherapy under one roof, for the whole family.\n\n## Why patients choose us\n\n- **Appointments within 48 hours**, same day for acute complaints\n- **Four specialists** who work as one team and share your records\n- **Early and late opening hours** for people who work\n\n[Book an appointment](/contact) or call us on +49 30 1234 5670.`,
    },
    {
      title: 'Our Services', slug: 'services',
      seo: { title: `Services – ${clinic}`, description: 'General practice, paediatrics, physiotherapy, vaccinations and preventive health checks.' },
      content: `# Our Services\n\nWe offer a wide range of treatments in one place, so that you do not have to go from one practice to the next.\n\n- **General Practice**: check-ups, acute illness and chronic conditions\n- **Paediatrics**: from the newborn examination to the teenage check-up\n- **Physiotherapy**: manual therapy and rehabilitation\n- **Vaccinations & Travel Medicine**: routine and travel vaccinations\n- **Preventive Health Check**: blood tests, ECG and a personal consultation\n\nStatutory and private insurance accepted.`,
    },
    {
      title: 'Our Team', slug: 'team',
      seo: { title: `Team – ${clinic}`, description: 'Meet our doctors and therapists.' },
      content: `# Our Team\n\nFour specialists, two nurses and our reception team look after you.\n\n- **Dr. med. Anna Keller**, general medicine, medical director\n- **Dr. med. Jonas Weber**, paediatrics\n- **Dr. med. Leila Haddad**, internal and travel medicine\n- **Maria Santos, MSc**, physiotherapy\n\nBetween us we speak English, German, French, Spanish, Portuguese and Arabic.`,
    },
    {
      title: 'Contact', slug: 'contact',
      seo: { title: `Contact – ${clinic}`, description: 'Opening hours, address and appointment requests.' },
      content: `# Contact\n\n**${clinic}**\nLindenstraße 12, 10969 Berlin\n\nPhone: +49 30 1234 5670\nE-mail: info@example-clinic.com\n\n## Opening hours\n\n| Day | Hours |\n|---|---|\n| Monday – Thursday | 7:30 – 19:00 |\n| Friday | 7:30 – 14:00 |\n\nIn an emergency outside our opening hours call 112.\n\nUse the form below to request an appointment; we answer within one working day.`,
    },
  ];
}

const CONTACT_FORM = {
  title: 'Appointment request', slug: 'contact', status: 'published',
  fields: [
    { name: 'name', label: 'Full name', type: 'text', required: true },
    { name: 'email', label: 'E-mail', type: 'email', required: true },
    { name: 'phone', label: 'Phone', type: 'text' },
    { name: 'service', label: 'Service', type: 'select', options: SERVICES.map((s) => s.title) },
    { name: 'message', label: 'Your message', type: 'textarea', required: true },
    { name: 'consent', label: 'I agree that my data is used to answer my request', type: 'checkbox', required: true },
  ],
};

/**
 * The CMS pack's part of the `healthcare` seed: writes the clinic content for a new tenant inside the
 * provisioning transaction; returns the count per content type.
 */
export const seedHealthcare: SeedContribution = async (rc, pack, tenant) => {
  const seeded: Record<string, number> = { page: 0, service: 0, practitioner: 0, form: 0 };
  await pack.schemas.registerForTenant(rc, SERVICE_SCHEMA);
  await pack.schemas.registerForTenant(rc, PRACTITIONER_SCHEMA);
  // Each content type in one bulk write: the validation, hooks and events of single writes, fewer statements.
  seeded.page = (await pack.bulk.writeAll(rc, 'cms', 'page', pages(tenant.name).map((page) => ({ ...page, status: 'published' })))).created;
  seeded.service = (await pack.bulk.writeAll(rc, 'cms', 'service', SERVICES.map((service) => ({ ...service, status: 'published' })))).created;
  seeded.practitioner = (await pack.bulk.writeAll(rc, 'cms', 'practitioner', PRACTITIONERS.map((p) => ({ ...p, status: 'published' })))).created;
  await pack.records.create(rc, 'cms', 'form', CONTACT_FORM);
  seeded.form += 1;
  return seeded;
};
