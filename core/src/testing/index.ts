export { runAdapterConformance, type AdapterFixture } from './adapter-conformance';
