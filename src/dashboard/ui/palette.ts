/** The dashboard's colours (Tableau 10, readable on white and for most colour-blind readers). */
export const palette = {
  blue: '#1f77b4',
  orange: '#ff7f0e',
  green: '#2ca02c',
  red: '#d62728',
  purple: '#9467bd',
  grey: '#7f7f7f',
  series: ['#2ca02c', '#1f77b4', '#ff7f0e', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf'],
};
