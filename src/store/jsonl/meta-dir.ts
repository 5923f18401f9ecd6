/** sessiond's own files in a CrabTalk-format directory (runtime sessions and agents.json live here too). */
export const META_DIR = ".sessiond";
