/** The navigation the Healthcare seed gives a clinic when the provisioning request names none. */
export const HEALTHCARE_NAVIGATION = [
  { label: 'Home', href: '/' },
  { label: 'Services', href: '/services' },
  { label: 'Team', href: '/team' },
  { label: 'Contact', href: '/contact' },
];

export const HEALTHCARE_BRANDING = {
  colors: { primary: '#0e7490', secondary: '#155e75', accent: '#f59e0b', background: '#ffffff', text: '#1f2937' },
  fonts: { heading: 'Merriweather', body: 'Inter' },
};

