export { default } from 'katex';
