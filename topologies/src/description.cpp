#include "tessera/topologies/description.hpp"
